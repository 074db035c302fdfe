import type { Context } from "hono";
import { loadConfigFromD1 } from "../../../durable-objects/messaging/config/session";
import type { SessionApiInput, SessionApiName, SessionApiOutput } from "../../../durable-objects/session/api";
import { sessionObject } from "../../../durable-objects/session/contract";
import type { AppEnv, Env } from "../../core/env";
import { database } from "../../db/client";
import type { SessionRow } from "../../db/schema";
import { unwrap } from "./outcome";
import { loadAccessibleSession } from "./store";

/**
 * Calls a named messaging handler on the session's Durable Object and unwraps the outcome: data, or
 * the ApiError the handler asked for (503 "Session not ready", 404, 400 …).
 */
export async function callSession<K extends SessionApiName>(
  env: Env,
  session: Pick<SessionRow, "id">,
  name: K,
  input: SessionApiInput<K>,
): Promise<SessionApiOutput<K>> {
  const outcome = await sessionObject(env, session.id).call(session.id, name, input);
  return unwrap(outcome) as SessionApiOutput<K>;
}

/**
 * The session named by the path's `{sessionId}` (slug or internal id), if the caller may use it for
 * this request: reading (GET, HEAD) needs any access, everything else an operator's or the owner's.
 */
export function accessibleSession(c: Context<AppEnv>, idOrSlug: string): Promise<SessionRow> {
  const need = c.req.method === "GET" || c.req.method === "HEAD" ? "read" : "operate";
  return loadAccessibleSession(database(c.env.DB), c.get("principal"), idOrSlug, need);
}

/** Sends the session's current settings and bot configuration to its Durable Object. */
export async function pushSessionConfig(env: Env, sessionId: string): Promise<void> {
  const copy = await loadConfigFromD1(env.DB, sessionId);
  await sessionObject(env, sessionId).configure(sessionId, copy);
}
