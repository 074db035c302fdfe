import { createRouter } from "../../http/openapi";
import { adapterRoutes } from "./adapters";
import { agentConfigRoutes } from "./config";
import { agentDeleteRoutes } from "./delete";
import { agentHireRoutes } from "./hires";
import { agentInstructionsRoutes } from "./instructions";
import { agentKeyRoutes } from "./keys";
import { agentLifecycleRoutes } from "./lifecycle";
import { agentOrgRoutes } from "./org";
import { agentSkillRoutes } from "./skills";
import { agentUpdateRoutes } from "./update";

/**
 * The agent endpoints of the control plane, one sub-router per concern. agentOrgRoutes goes first:
 * its GET /agents/me must be matched before GET /agents/{agentId}.
 */
export const agentRoutes = createRouter();
agentRoutes.route("/", agentOrgRoutes);
agentRoutes.route("/", agentHireRoutes);
agentRoutes.route("/", agentUpdateRoutes);
agentRoutes.route("/", agentLifecycleRoutes);
agentRoutes.route("/", agentDeleteRoutes);
agentRoutes.route("/", agentKeyRoutes);
agentRoutes.route("/", agentConfigRoutes);
agentRoutes.route("/", agentInstructionsRoutes);
agentRoutes.route("/", agentSkillRoutes);
agentRoutes.route("/", adapterRoutes);
