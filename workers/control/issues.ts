import { createRouter } from "../http/openapi";
import { issueCommentRoutes } from "./issue-comments";
import { issueCreateRoutes } from "./issue-create";
import { issueDetailRoutes } from "./issue-detail";
import { issueInboxRoutes } from "./issue-inbox";
import { issueListRoutes } from "./issue-list";
import { issuePatchRoutes } from "./issue-patch";

/**
 * The issue endpoints (checkout, release, documents and approval links live in issue-work.ts):
 * create and list under a company, detail, heartbeat context and PATCH by id or identifier,
 * comments, and the Mine inbox. Mutations of an existing issue run in its IssueDO (issue-ops/).
 */
export const issueRoutes = createRouter();
issueRoutes.route("/", issueCreateRoutes);
issueRoutes.route("/", issueListRoutes);
issueRoutes.route("/", issueDetailRoutes);
issueRoutes.route("/", issuePatchRoutes);
issueRoutes.route("/", issueCommentRoutes);
issueRoutes.route("/", issueInboxRoutes);
