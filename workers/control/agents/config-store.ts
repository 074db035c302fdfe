import { type ActorRef, authorColumns } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type AgentRow, agentConfigRevisions, type JsonObject } from "../../db/schema";
import { REDACTED, redactSecrets } from "../shared";

/**
 * An agent's configuration (what a run executes with) and its revision history. Identity, reporting
 * line and budget are not configuration: their changes are in the activity log, not in revisions,
 * so a rollback can never move an agent in the org or raise its budget.
 */
export const CONFIG_KEYS = ["adapterType", "adapterConfig", "runtimeConfig", "desiredSkills"] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];
export type AgentConfig = Pick<AgentRow, ConfigKey>;

export const DEFAULT_INSTRUCTIONS_KEY = "instructionsFilePath";

export const configOf = (row: AgentConfig): AgentConfig => ({
  adapterType: row.adapterType,
  adapterConfig: row.adapterConfig,
  runtimeConfig: row.runtimeConfig,
  desiredSkills: row.desiredSkills,
});

/** JSON with object keys sorted, so two configs compare by content rather than key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, inner]) => inner !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonical(inner)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export const sameJson = (a: unknown, b: unknown): boolean => canonical(a) === canonical(b);

export const changedConfigKeys = (before: AgentConfig, after: AgentConfig): ConfigKey[] =>
  CONFIG_KEYS.filter((key) => !sameJson(before[key], after[key]));

/** Heartbeats are off until asked for; an on-demand wake is allowed unless switched off. */
export function withRuntimeDefaults(config: JsonObject | undefined): JsonObject {
  const given = config ?? {};
  const heartbeat = (given.heartbeat ?? {}) as JsonObject;
  return { ...given, heartbeat: { enabled: false, intervalSec: 3600, wakeOnDemand: true, ...heartbeat } };
}

/**
 * Config reads show secrets as a placeholder; a client that writes such a read back must not
 * replace the real value with the placeholder. Wherever `next` holds the placeholder, the current
 * value at the same place is kept.
 */
export function restoreRedacted(next: unknown, current: unknown): unknown {
  if (next === REDACTED) return current === undefined ? next : current;
  if (Array.isArray(next))
    return next.map((item, index) =>
      restoreRedacted(item, Array.isArray(current) ? current[index] : undefined),
    );
  if (next === null || typeof next !== "object") return next;
  const base = current !== null && typeof current === "object" ? (current as Record<string, unknown>) : {};
  return Object.fromEntries(
    Object.entries(next as Record<string, unknown>).map(([key, inner]) => [
      key,
      restoreRedacted(inner, base[key]),
    ]),
  );
}

export interface RevisionEntry {
  agent: AgentRow;
  before: AgentConfig;
  after: AgentConfig;
  changedKeys: readonly ConfigKey[];
  /** patch | rollback | instructions_path | skills_sync */
  source: string;
  actor: ActorRef;
  rolledBackFromRevisionId?: string;
}

/** The revision insert, unexecuted, for the batch of the change it records. Stored unredacted (rollback needs the values). */
export function revisionInsert(db: Db, entry: RevisionEntry, now: number) {
  const author = authorColumns(entry.actor);
  return db.insert(agentConfigRevisions).values({
    id: newId(),
    companyId: entry.agent.companyId,
    agentId: entry.agent.id,
    source: entry.source,
    changedKeys: [...entry.changedKeys],
    beforeConfig: { ...configOf(entry.before) },
    afterConfig: { ...configOf(entry.after) },
    rolledBackFromRevisionId: entry.rolledBackFromRevisionId ?? null,
    createdByUserId: author.userId,
    createdByAgentId: author.agentId,
    createdAt: now,
  });
}

export const revisionResource = (row: typeof agentConfigRevisions.$inferSelect) => ({
  id: row.id,
  companyId: row.companyId,
  agentId: row.agentId,
  source: row.source,
  changedKeys: row.changedKeys,
  beforeConfig: redactSecrets(row.beforeConfig),
  afterConfig: redactSecrets(row.afterConfig),
  rolledBackFromRevisionId: row.rolledBackFromRevisionId,
  createdByUserId: row.createdByUserId,
  createdByAgentId: row.createdByAgentId,
  createdAt: new Date(row.createdAt).toISOString(),
});

/** GET /agents/:id/configuration and the company-wide list: what the agent runs with, redacted. */
export const configurationResource = (row: AgentRow) => {
  const path = row.adapterConfig[DEFAULT_INSTRUCTIONS_KEY];
  return {
    agentId: row.id,
    companyId: row.companyId,
    name: row.name,
    status: row.status,
    adapterType: row.adapterType,
    adapterConfig: redactSecrets(row.adapterConfig),
    runtimeConfig: redactSecrets(row.runtimeConfig),
    desiredSkills: row.desiredSkills,
    instructionsFilePath: typeof path === "string" ? path : null,
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
};
