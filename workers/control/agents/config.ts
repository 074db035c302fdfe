import { createRoute, z } from "@hono/zod-openapi";
import { and, desc, eq, sql } from "drizzle-orm";
import { refOf } from "../../core/actor";
import { ADAPTER_TYPES, type AgentRow, agentConfigRevisions, agents } from "../../db/schema";
import { notFound } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json } from "../../http/openapi";
import { activityInsert, companyForActor, controlContext } from "../shared";
import {
  type AgentConfig,
  CONFIG_KEYS,
  changedConfigKeys,
  configOf,
  configurationResource,
  revisionInsert,
  revisionResource,
} from "./config-store";
import {
  AgentConfigurationSchema,
  AgentParamSchema,
  AgentSchema,
  CompanyParamSchema,
  ConfigRevisionSchema,
} from "./schemas";
import { ensureSecretBindingsAllowed } from "./secret-bindings";
import {
  agentResource,
  agentWithCompany,
  authorize,
  commit,
  companyAgents,
  ensureNotTerminated,
  findAgent,
  requireOwnerToSteerCeo,
} from "./store";

/** Config reads (redacted), revision history and rollback. */
export const agentConfigRoutes = createRouter();
const tags = ["Agents"];

agentConfigRoutes.openapi(
  createRoute({
    method: "get",
    path: "/agents/{agentId}/configuration",
    tags,
    summary: "The agent's configuration (adapter, runtime, skills, instructions path); secrets redacted",
    security: controlAuth,
    request: { params: AgentParamSchema },
    responses: { 200: json(AgentConfigurationSchema, "Configuration"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    return c.json(configurationResource(await findAgent(db, actor, c.req.valid("param").agentId)), 200);
  },
);

agentConfigRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/agent-configurations",
    tags,
    summary: "Configurations of all the company's agents; secrets redacted",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(z.array(AgentConfigurationSchema), "Configurations"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const rows = [...(await companyAgents(db, company.id)).values()];
    return c.json(rows.map(configurationResource), 200);
  },
);

agentConfigRoutes.openapi(
  createRoute({
    method: "get",
    path: "/agents/{agentId}/config-revisions",
    tags,
    summary: "Config revisions of the agent, newest first; secrets redacted",
    security: controlAuth,
    request: { params: AgentParamSchema },
    responses: { 200: json(z.array(ConfigRevisionSchema), "Revisions"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const agent = await findAgent(db, actor, c.req.valid("param").agentId);
    const rows = await db
      .select()
      .from(agentConfigRevisions)
      .where(eq(agentConfigRevisions.agentId, agent.id))
      // rowid breaks ties between revisions written in the same millisecond.
      .orderBy(desc(agentConfigRevisions.createdAt), desc(sql`rowid`));
    return c.json(rows.map(revisionResource), 200);
  },
);

/** The config a revision started from, read defensively: stored JSON of an older shape may lack keys. */
function configBefore(revision: typeof agentConfigRevisions.$inferSelect, current: AgentRow): AgentConfig {
  const before = revision.beforeConfig;
  const adapterType = ADAPTER_TYPES.find((type) => type === before.adapterType) ?? current.adapterType;
  const pick = <K extends keyof AgentConfig>(key: K, valid: (value: unknown) => boolean): AgentConfig[K] =>
    valid(before[key]) ? (before[key] as AgentConfig[K]) : current[key];
  const isObject = (value: unknown) => value !== null && typeof value === "object" && !Array.isArray(value);
  return {
    adapterType,
    adapterConfig: pick("adapterConfig", isObject),
    runtimeConfig: pick("runtimeConfig", isObject),
    desiredSkills: pick(
      "desiredSkills",
      (value) => Array.isArray(value) && value.every((v) => typeof v === "string"),
    ),
  };
}

agentConfigRoutes.openapi(
  createRoute({
    method: "post",
    path: "/agents/{agentId}/config-revisions/{revisionId}/rollback",
    tags,
    summary:
      "Restore the configuration from before a revision (board, the CEO, a manager above it, the agent)",
    description:
      `Restores ${CONFIG_KEYS.join(", ")} to the revision's beforeConfig and records a new revision ` +
      "(source rollback, rolledBackFromRevisionId). Nothing is written when that is already the config. " +
      "Secret references it would add or change: agents get 403, a version rotated away is a 400.",
    security: controlAuth,
    request: { params: AgentParamSchema.extend({ revisionId: z.string().min(1).max(64) }) },
    responses: {
      200: json(AgentSchema, "The agent with the restored configuration"),
      ...controlErrors,
      422: controlError("The agent is terminated"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const params = c.req.valid("param");
    const { agent, byId } = await agentWithCompany(db, actor, params.agentId);
    const revision = await db
      .select()
      .from(agentConfigRevisions)
      .where(and(eq(agentConfigRevisions.id, params.revisionId), eq(agentConfigRevisions.agentId, agent.id)))
      .get();
    if (!revision) throw notFound("Config revision not found");
    authorize(actor, agent, byId, ["self", "ceo", "ancestor"], "roll back this agent's config");
    if (agent.role === "ceo")
      await requireOwnerToSteerCeo(db, actor, agent.companyId, "roll back the CEO agent's config");
    ensureNotTerminated(agent);
    const restored = configBefore(revision, agent);
    await ensureSecretBindingsAllowed(
      db,
      actor,
      agent.companyId,
      agent.adapterConfig,
      restored.adapterConfig,
    );
    const changedKeys = changedConfigKeys(configOf(agent), restored);
    if (changedKeys.length === 0) return c.json(agentResource(agent), 200);
    const now = Date.now();
    const next: AgentRow = { ...agent, ...restored, updatedAt: now };
    const ref = refOf(actor);
    await commit(db, [
      db
        .update(agents)
        .set({ ...restored, updatedAt: now })
        .where(eq(agents.id, agent.id)),
      revisionInsert(
        db,
        {
          agent,
          before: agent,
          after: next,
          changedKeys,
          source: "rollback",
          actor: ref,
          rolledBackFromRevisionId: revision.id,
        },
        now,
      ),
      activityInsert(
        db,
        {
          companyId: agent.companyId,
          actor: ref,
          action: "agent.config_rolled_back",
          entityType: "agent",
          entityId: agent.id,
          details: { revisionId: revision.id, changedKeys },
        },
        now,
      ),
    ]);
    return c.json(agentResource(next), 200);
  },
);
