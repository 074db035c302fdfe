import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import type { AgentRow } from "../../db/schema";
import { cappedText } from "../../http/capped-text";
import { allowedHostsOf, webhookTargetProblem } from "../../webhooks/targets";
import { resolveSecretEnv } from "../secrets";
import type { ModelOption } from "./adapter-models";

/**
 * The models an agent's own provider serves (adapterConfig.provider.baseUrl, see the adapters in
 * bridge/src/runner/adapters): `GET <baseUrl>/models`, the list every OpenAI-compatible server (and
 * Anthropic's API) answers, with the agent's key. Through the same address guard as webhooks (no
 * private addresses but WEBHOOK_ALLOWED_HOSTS), within a time and size budget; null whenever the
 * provider does not answer with a list, so the caller falls back to the usual catalogue.
 */

const LIST_TIMEOUT_MS = 5_000;
const LIST_MAX_BYTES = 512 * 1024;
const LIST_MAX_MODELS = 500;

interface Endpoint {
  baseUrl: string;
  envKey: string | null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The key's variable when the config names none: the one each CLI reads for its provider. */
const DEFAULT_KEYS: Partial<Record<AgentRow["adapterType"], string>> = {
  codex_local: "OPENAI_API_KEY",
  claude_local: "ANTHROPIC_API_KEY",
};

/** adapterConfig.provider, when it names a base URL. */
function endpointOf(agent: AgentRow): Endpoint | null {
  const provider = agent.adapterConfig.provider;
  if (!isObject(provider) || typeof provider.baseUrl !== "string") return null;
  const envKey =
    typeof provider.envKey === "string" ? provider.envKey : (DEFAULT_KEYS[agent.adapterType] ?? null);
  return { baseUrl: provider.baseUrl.replace(/\/+$/, ""), envKey };
}

/** OpenCode names a model `<provider>/<model>`: the provider id is the configured model's. */
function idPrefix(agent: AgentRow): string {
  if (agent.adapterType !== "opencode_local") return "";
  const model = agent.adapterConfig.model;
  const provider = typeof model === "string" ? model.split("/")[0] : undefined;
  return provider ? `${provider}/` : "";
}

function authHeaders(agent: AgentRow, key: string | undefined): Record<string, string> {
  if (!key) return {};
  // Anthropic's API takes its key as x-api-key (and wants a version); the others a bearer token.
  if (agent.adapterType === "claude_local") return { "x-api-key": key, "anthropic-version": "2023-06-01" };
  return { Authorization: `Bearer ${key}` };
}

/** `{data: [{id}, …]}` → the ids, at most LIST_MAX_MODELS; null for anything else. */
function modelIds(text: string | null): string[] | null {
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(parsed) || !Array.isArray(parsed.data)) return null;
  const ids = parsed.data
    .map((entry) => (isObject(entry) && typeof entry.id === "string" ? entry.id : null))
    .filter((id): id is string => id !== null && id.length > 0 && id.length <= 200);
  return ids.slice(0, LIST_MAX_MODELS);
}

export async function providerModels(env: Env, db: Db, agent: AgentRow): Promise<ModelOption[] | null> {
  const endpoint = endpointOf(agent);
  if (!endpoint) return null;
  const url = `${endpoint.baseUrl}/models`;
  if (webhookTargetProblem(url, allowedHostsOf(env.WEBHOOK_ALLOWED_HOSTS))) return null;
  let key: string | undefined;
  try {
    const variables = await resolveSecretEnv(env, db, agent.companyId, agent.adapterConfig.env);
    key = endpoint.envKey ? variables[endpoint.envKey] : undefined;
  } catch {
    return null;
  }
  try {
    const response = await fetch(url, {
      headers: { Accept: "application/json", ...authHeaders(agent, key) },
      redirect: "manual",
      signal: AbortSignal.timeout(LIST_TIMEOUT_MS),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return null;
    }
    const ids = modelIds(await cappedText(response, LIST_MAX_BYTES));
    if (!ids || ids.length === 0) return null;
    const prefix = idPrefix(agent);
    const current = agent.adapterConfig.model;
    return ids.map((id) => ({
      id: `${prefix}${id}`,
      label: id,
      ...(`${prefix}${id}` === current ? { default: true } : {}),
    }));
  } catch {
    return null;
  }
}
