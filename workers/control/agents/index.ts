/**
 * Agents of a company: hiring, configuration with revisions, instructions, skills, keys, the org
 * chart, pause, resume and terminate. HTTP in routes.ts (mounted by ../routes.ts).
 *
 * This index is what the rest of the code may import from here.
 */
export { ADAPTER_MODELS } from "./adapter-models";
export {
  type AgentDetailSchema,
  type AgentKeySchema,
  type AgentSchema,
  type ConfigRevisionSchema,
  type CreatedAgentKeySchema,
  type HireResultSchema,
  type OrgNodeSchema,
  RunSchema,
} from "./schemas";
export { DEFAULT_SKILL_NAMESPACE, type SkillRow, skillsOf } from "./skill-store";
export { agentWithCompany, authorize } from "./store";
