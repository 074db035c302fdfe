import { createRouter } from "../http/openapi";
import { agentRoutes } from "./agents/routes";
import { approvalRoutes } from "./approvals/routes";
import { budgetIncidentRoutes } from "./budgets/incident-routes";
import { budgetRoutes } from "./budgets/routes";
import { labelRoutes } from "./companies/labels";
import { companyRoutes } from "./companies/routes";
import { modelPriceRoutes } from "./costs/price-routes";
import { costRoutes } from "./costs/routes";
import { inviteRoutes } from "./invites/routes";
import { issueRoutes } from "./issues/routes";
import { issueWorkRoutes } from "./issues/routes/work";
import { memberLineRoutes } from "./line/member-routes";
import { policyRoutes } from "./line/policy-routes";
import { lineRoutes } from "./line/routes";
import { memberInviteRoutes } from "./members/invite-routes";
import { memberRoutes } from "./members/routes";
import { signupRoutes } from "./members/signup-routes";
import { packageRoutes } from "./packages/routes";
import { notificationRoutes } from "./people/routes";
import { goalRoutes } from "./projects/goals";
import { projectRoutes } from "./projects/routes";
import { routineRoutes } from "./routines/routes";
import { runnerRoutes } from "./runners/routes";
import { runCancelRoutes } from "./runs/cancel";
import { runRoutes } from "./runs/routes";
import { secretRoutes } from "./secrets/routes";

/**
 * The control plane, mounted at /api. Each module registers its full paths (`/companies/{id}/…`,
 * `/issues/{id}/…`), so the route list reads the same as the spec's endpoint tables.
 */
export const controlRoutes = createRouter();
controlRoutes.route("/", companyRoutes);
controlRoutes.route("/", projectRoutes);
controlRoutes.route("/", goalRoutes);
controlRoutes.route("/", labelRoutes);
controlRoutes.route("/", lineRoutes);
controlRoutes.route("/", policyRoutes);
controlRoutes.route("/", memberLineRoutes);
controlRoutes.route("/", agentRoutes);
controlRoutes.route("/", issueWorkRoutes);
controlRoutes.route("/", issueRoutes);
controlRoutes.route("/", costRoutes);
controlRoutes.route("/", modelPriceRoutes);
controlRoutes.route("/", budgetRoutes);
controlRoutes.route("/", budgetIncidentRoutes);
controlRoutes.route("/", routineRoutes);
controlRoutes.route("/", approvalRoutes);
controlRoutes.route("/", secretRoutes);
controlRoutes.route("/", runRoutes);
controlRoutes.route("/", runCancelRoutes);
controlRoutes.route("/", runnerRoutes);
controlRoutes.route("/", inviteRoutes);
controlRoutes.route("/", packageRoutes);
controlRoutes.route("/", memberRoutes);
controlRoutes.route("/", memberInviteRoutes);
controlRoutes.route("/", signupRoutes);
controlRoutes.route("/", notificationRoutes);
