import { createRouter } from "../http/openapi";
import { adapterRoutes } from "./adapters";
import { agentConfigRoutes } from "./agent-config";
import { agentHireRoutes } from "./agent-hires";
import { agentInstructionsRoutes } from "./agent-instructions";
import { agentKeyRoutes } from "./agent-keys";
import { agentLifecycleRoutes } from "./agent-lifecycle";
import { agentOrgRoutes } from "./agent-org";
import { agentSkillRoutes } from "./agent-skills";
import { agentUpdateRoutes } from "./agent-update";

/**
 * The agent endpoints of the control plane, one sub-router per concern. agentOrgRoutes goes first:
 * its GET /agents/me must be matched before GET /agents/{agentId}.
 */
export const agentRoutes = createRouter();
agentRoutes.route("/", agentOrgRoutes);
agentRoutes.route("/", agentHireRoutes);
agentRoutes.route("/", agentUpdateRoutes);
agentRoutes.route("/", agentLifecycleRoutes);
agentRoutes.route("/", agentKeyRoutes);
agentRoutes.route("/", agentConfigRoutes);
agentRoutes.route("/", agentInstructionsRoutes);
agentRoutes.route("/", agentSkillRoutes);
agentRoutes.route("/", adapterRoutes);
