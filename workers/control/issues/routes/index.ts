import { createRouter } from "../../../http/openapi";
import { issueAttachmentRoutes } from "./attachments";
import { issueBoardRoutes } from "./board";
import { issueCommentRoutes } from "./comments";
import { issueCreateRoutes } from "./create";
import { issueDetailRoutes } from "./detail";
import { issueEventRoutes } from "./events";
import { issueInboxRoutes } from "./inbox";
import { issueListRoutes } from "./list";
import { issuePatchRoutes } from "./patch";

/**
 * The issue endpoints (checkout, release, documents and approval links live in work.ts):
 * create, list and the board (one column per status) under a company, detail, heartbeat context and PATCH by id or identifier,
 * comments, attachments, the Mine inbox, and the live sockets of an issue and of a company's board. Mutations of an existing issue run in its IssueDO (../apply.ts and one module per operation).
 */
export const issueRoutes = createRouter();
issueRoutes.route("/", issueCreateRoutes);
issueRoutes.route("/", issueListRoutes);
issueRoutes.route("/", issueBoardRoutes);
issueRoutes.route("/", issueDetailRoutes);
issueRoutes.route("/", issuePatchRoutes);
issueRoutes.route("/", issueCommentRoutes);
issueRoutes.route("/", issueAttachmentRoutes);
issueRoutes.route("/", issueInboxRoutes);
issueRoutes.route("/", issueEventRoutes);
