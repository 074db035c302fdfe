import { createRouter } from "../http/openapi";
import { agentRoutes } from "./agents";
import { approvalRoutes } from "./approvals";
import { companyRoutes } from "./companies";
import { costRoutes } from "./costs";
import { goalRoutes } from "./goals";
import { inviteRoutes } from "./invites";
import { issueWorkRoutes } from "./issue-work";
import { issueRoutes } from "./issues";
import { labelRoutes } from "./labels";
import { packageRoutes } from "./package-routes";
import { projectRoutes } from "./projects";
import { routineRoutes } from "./routines";
import { runRoutes } from "./runs";
import { secretRoutes } from "./secrets";

/**
 * The control plane, mounted at /api. Each module registers its full paths (`/companies/{id}/…`,
 * `/issues/{id}/…`), so the route list reads the same as the spec's endpoint tables.
 */
export const controlRoutes = createRouter();
controlRoutes.route("/", companyRoutes);
controlRoutes.route("/", projectRoutes);
controlRoutes.route("/", goalRoutes);
controlRoutes.route("/", labelRoutes);
controlRoutes.route("/", agentRoutes);
controlRoutes.route("/", issueWorkRoutes);
controlRoutes.route("/", issueRoutes);
controlRoutes.route("/", costRoutes);
controlRoutes.route("/", routineRoutes);
controlRoutes.route("/", approvalRoutes);
controlRoutes.route("/", secretRoutes);
controlRoutes.route("/", runRoutes);
controlRoutes.route("/", inviteRoutes);
controlRoutes.route("/", packageRoutes);
