import { createRoute } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { agentCredentialsChanged } from "../../auth/agent-key-store";
import { type Actor, refOf } from "../../core/actor";
import type { Db } from "../../db/client";
import { type AgentRow, agents, type JsonObject } from "../../db/schema";
import { conflict, forbidden } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { settleIncidents } from "../budgets";
import { activityInsert, controlContext } from "../shared";
import {
  changedConfigKeys,
  restoreRedacted,
  revisionInsert,
  sameJson,
  withRuntimeDefaults,
} from "./config-store";
import { AgentParamSchema, type AgentPatchInput, AgentPatchSchema, AgentSchema } from "./schemas";
import { ensureSecretBindingsAllowed } from "./secret-bindings";
import { canonicalKeys } from "./skill-store";
import {
  type AgentsById,
  agentResource,
  agentWithCompany,
  authorize,
  commit,
  ensureNotTerminated,
  ensureSingleCeo,
  ensureWithinTeam,
  nameTaken,
  requireOwnerToSteerCeo,
  validateManager,
  writeAgent,
} from "./store";

/** PATCH /agents/:id: identity, reporting line, configuration and budget. */
export const agentUpdateRoutes = createRouter();

/** What an agent may not change about itself: its place in the org, its rank and its budget. */
const SELF_LOCKED = ["reportsTo", "role", "budgetMonthlyCents"] as const;

const PATCHABLE = [
  "name",
  "role",
  "title",
  "icon",
  "reportsTo",
  "capabilities",
  "adapterType",
  "adapterConfig",
  "runtimeConfig",
  "budgetMonthlyCents",
  "desiredSkills",
] as const;

/** The row after the patch: only the fields the body names, normalised like on create. */
async function nextRow(db: Db, agent: AgentRow, input: AgentPatchInput): Promise<AgentRow> {
  const next: AgentRow = { ...agent };
  if (input.name !== undefined) next.name = input.name;
  next.nameKey = next.name.toLowerCase();
  if (input.role !== undefined) next.role = input.role;
  if (input.title !== undefined) next.title = input.title;
  if (input.icon !== undefined) next.icon = input.icon;
  if (input.reportsTo !== undefined) next.reportsTo = input.reportsTo;
  if (input.capabilities !== undefined) next.capabilities = input.capabilities;
  if (input.adapterType !== undefined) next.adapterType = input.adapterType;
  if (input.adapterConfig !== undefined)
    next.adapterConfig = restoreRedacted(input.adapterConfig, agent.adapterConfig) as JsonObject;
  if (input.runtimeConfig !== undefined)
    next.runtimeConfig = withRuntimeDefaults(
      restoreRedacted(input.runtimeConfig, agent.runtimeConfig) as JsonObject,
    );
  if (input.budgetMonthlyCents !== undefined) next.budgetMonthlyCents = input.budgetMonthlyCents;
  if (input.desiredSkills !== undefined)
    next.desiredSkills = await canonicalKeys(db, agent.companyId, input.desiredSkills);
  return next;
}

/** The rules a changed field must keep (same as on create), checked only for fields that change. */
function checkChanges(
  actor: Actor,
  byId: AgentsById,
  before: AgentRow,
  after: AgentRow,
  changed: Set<string>,
) {
  if (actor.type === "agent" && actor.agentId === before.id) {
    const locked = SELF_LOCKED.filter((key) => changed.has(key));
    if (locked.length > 0) throw forbidden(`An agent cannot change its own ${locked.join(", ")}`);
  }
  if (changed.has("name") && nameTaken(byId, after.name, before.id))
    throw conflict(`An agent named "${after.name}" already exists`);
  if (changed.has("role")) ensureSingleCeo(byId, after.role, before.id);
  if (changed.has("reportsTo")) {
    ensureWithinTeam(actor, byId, after.reportsTo);
    if (after.reportsTo !== null) validateManager(byId, after.reportsTo, before.id);
  }
}

/** A change that decides what the CEO agent runs, or which agent is the CEO (owners only, for people). */
const steersCeo = (before: AgentRow, after: AgentRow, changed: Set<string>) =>
  (before.role === "ceo" && (changed.has("adapterType") || changed.has("adapterConfig"))) ||
  (changed.has("role") && after.role === "ceo");

agentUpdateRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/agents/{agentId}",
    tags: ["Agents"],
    summary: "Update an agent's config or budget (board, the CEO, a manager above it, or the agent itself)",
    description:
      "Only the fields sent change; adapterConfig and runtimeConfig are replaced as a whole, except " +
      "that redacted placeholders keep the stored secret. An agent cannot change its own reportsTo, " +
      "role or budget (403). Only board users add or change secret references in adapterConfig.env " +
      "(an agent caller gets 403); a reference to another company's secret or to a version rotated " +
      "away is a 400. The CEO agent's adapterType and adapterConfig, and making an agent the CEO: " +
      "owners only among board users (403 for members). A change to adapterType, adapterConfig, " +
      "runtimeConfig or desiredSkills " +
      "writes a config revision (source patch).",
    security: controlAuth,
    request: { params: AgentParamSchema, ...jsonBody(AgentPatchSchema) },
    responses: {
      200: json(AgentSchema, "The updated agent"),
      ...controlErrors,
      409: controlError("Another agent has this name"),
      422: controlError("Agent terminated; second CEO; invalid reportsTo or desiredSkills"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { agent, byId } = await agentWithCompany(db, actor, c.req.valid("param").agentId);
    authorize(actor, agent, byId, ["self", "ceo", "ancestor"], "update this agent");
    ensureNotTerminated(agent);
    const next = await nextRow(db, agent, c.req.valid("json"));
    const changed = new Set<string>(PATCHABLE.filter((key) => !sameJson(agent[key], next[key])));
    if (changed.size === 0) return c.json(agentResource(agent), 200);
    checkChanges(actor, byId, agent, next, changed);
    if (steersCeo(agent, next, changed))
      await requireOwnerToSteerCeo(
        db,
        actor,
        agent.companyId,
        "change what the CEO agent runs or who is CEO",
      );
    if (changed.has("adapterConfig"))
      await ensureSecretBindingsAllowed(db, actor, agent.companyId, agent.adapterConfig, next.adapterConfig);
    const now = Date.now();
    next.updatedAt = now;
    const ref = refOf(actor);
    const configKeys = changedConfigKeys(agent, next);
    const statements: BatchItem<"sqlite">[] = [db.update(agents).set(next).where(eq(agents.id, agent.id))];
    if (changed.has("budgetMonthlyCents"))
      statements.push(
        settleIncidents(
          db,
          { companyId: agent.companyId, scope: "agent", scopeId: agent.id, window: "month" },
          { amountCents: next.budgetMonthlyCents, spentCents: next.spentMonthlyCents },
          actor.type === "board" ? actor.userId : null,
          now,
        ),
      );
    if (configKeys.length > 0)
      statements.push(
        revisionInsert(
          db,
          { agent, before: agent, after: next, changedKeys: configKeys, source: "patch", actor: ref },
          now,
        ),
      );
    statements.push(
      activityInsert(
        db,
        {
          companyId: agent.companyId,
          actor: ref,
          action: "agent.updated",
          entityType: "agent",
          entityId: agent.id,
          details: { changedKeys: [...changed] },
        },
        now,
      ),
    );
    await writeAgent(commit(db, statements));
    if (next.role !== agent.role) await agentCredentialsChanged(c.env, agent.id);
    return c.json(agentResource(next), 200);
  },
);
