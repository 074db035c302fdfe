import type { Context } from "hono";
import { sessionObject } from "../../../durable-objects/session/contract";
import {
  CREDENTIALS_CHANGED,
  confirmLiveSocket,
  type LiveCut,
  noteLiveSocket,
  ownerTag,
  SHARE_ENDED,
} from "../../auth/live-sockets";
import { keyExpiryOf, resolvePrincipal } from "../../auth/middleware";
import type { AppEnv } from "../../core/env";
import { database } from "../../db/client";
import type { SessionRow } from "../../db/schema";
import { cursorGone } from "./event-log";
import { accessOf } from "./store";

/**
 * The pairing page's socket on a session the caller was shown to read: noted with the caller's
 * Keyring shard (so a revoked key, account or share closes it: auth/live-sockets.ts), opened in the
 * session's object, then confirmed against the caller's credential and share as they are now.
 */
export function openSessionWatch(c: Context<AppEnv>, session: SessionRow): Promise<Response> {
  return openSessionSocket(c, session, new URL(`https://session/watch/${encodeURIComponent(session.id)}`));
}

/**
 * The session's event stream from cursor `after` (issue 33, docs/events.md), under the same rules as
 * the pairing page's socket: ending the caller's access closes it.
 */
export async function openEventStream(
  c: Context<AppEnv>,
  session: SessionRow,
  after: string,
): Promise<Response> {
  const stream = new URL(`https://session/events-stream/${encodeURIComponent(session.id)}`);
  stream.searchParams.set("after", after);
  stream.searchParams.set("slug", session.sessionId);
  const opened = await openSessionSocket(c, session, stream);
  if (opened.status !== 410) return opened;
  throw cursorGone(opened.headers.get("X-Oldest-Cursor") ?? "0");
}

async function openSessionSocket(c: Context<AppEnv>, session: SessionRow, watch: URL): Promise<Response> {
  const owner = { kind: "user", id: c.get("principal").user.id } as const;
  const host = { binding: "SESSION", name: session.id, companyId: null } as const;
  await noteLiveSocket(c.env, owner, host, keyExpiryOf(c));
  watch.searchParams.set("who", ownerTag(owner));
  const upgraded = await sessionObject(c.env, session.id).fetch(
    new Request(watch, { headers: { Upgrade: "websocket" } }),
  );
  if (upgraded.status === 101)
    await confirmLiveSocket(c.env, owner, host, () => recheck(c, owner.id, session));
  return upgraded;
}

/** Why the caller may no longer watch the session (their credential or share ended), or null. */
async function recheck(c: Context<AppEnv>, userId: string, session: SessionRow): Promise<LiveCut | null> {
  const principal = await resolvePrincipal(c);
  if (principal === null || principal.user.id !== userId) return CREDENTIALS_CHANGED;
  const access = await accessOf(database(c.env.DB), principal, session);
  return access === null ? SHARE_ENDED : null;
}
