import { createRouter } from "../../../http/openapi";
import { issueApprovalRoutes } from "./approvals";
import { issueCheckoutRoutes } from "./checkout";
import { issueDocumentRoutes } from "./documents";
import { issueQuestionRoutes } from "./questions";

/**
 * Work on an existing issue besides its own fields: checkout and release, documents, approval
 * links, questions. Every mutation runs in the issue's IssueDO (../apply.ts), reads go straight to D1.
 */
export const issueWorkRoutes = createRouter();
issueWorkRoutes.route("/", issueCheckoutRoutes);
issueWorkRoutes.route("/", issueDocumentRoutes);
issueWorkRoutes.route("/", issueApprovalRoutes);
issueWorkRoutes.route("/", issueQuestionRoutes);
