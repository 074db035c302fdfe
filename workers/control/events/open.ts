import type { Context } from "hono";
import {
  CREDENTIALS_CHANGED,
  confirmLiveSocket,
  type LiveCut,
  type LiveHost,
  type LiveOwner,
  MEMBERSHIP_ENDED,
  noteLiveSocket,
  ownerTag,
} from "../../auth/live-sockets";
import { currentOwner, keyExpiryOf } from "../../auth/middleware";
import type { Actor } from "../../core/actor";
import type { AppEnv } from "../../core/env";
import { database } from "../../db/client";
import { relayUpgrade } from "../../http/upgrade";
import { membershipRole } from "../shared";

/**
 * Opening a control-plane live socket (the dashboard's issue and board feeds, a company's public event
 * stream): authorised by the route like every read, then noted so that ending the caller's access
 * closes it (auth/live-sockets.ts).
 */

/** Whose socket it is, for closing it when that access ends (auth/live-sockets.ts). */
const ownerOf = (actor: Actor): LiveOwner =>
  actor.type === "agent" ? { kind: "agent", id: actor.agentId } : { kind: "user", id: actor.userId };

/**
 * Notes the socket with its owner's Keyring shard, opens it in `host`, then checks the caller's access
 * again and closes it if a revocation raced the upgrade (auth/live-sockets.ts).
 */
export async function openLive(
  c: Context<AppEnv>,
  actor: Actor,
  host: LiveHost,
  open: (ownerTag: string) => Promise<Response>,
): Promise<Response> {
  const owner = ownerOf(actor);
  await noteLiveSocket(c.env, owner, host, keyExpiryOf(c));
  const response = await relayUpgrade(open(ownerTag(owner)));
  if (response.status === 101) await confirmLiveSocket(c.env, owner, host, () => recheck(c, host));
  return response;
}

/** Why the caller may no longer listen to `host`'s company (read from the Keyring and D1), or null. */
async function recheck(c: Context<AppEnv>, host: LiveHost): Promise<LiveCut | null> {
  const now = await currentOwner(c);
  if (now === null) return CREDENTIALS_CHANGED;
  if (now.kind === "agent") return now.companyId === host.companyId ? null : CREDENTIALS_CHANGED;
  const role =
    host.companyId === null ? null : await membershipRole(database(c.env.DB), now.id, host.companyId);
  return role === null ? MEMBERSHIP_ENDED : null;
}
