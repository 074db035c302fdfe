import type { Env } from "../core/env";
import { namespaceOf } from "../core/env";
import { keyringTagFor } from "./api-key-format";
import { keyringShard, type LiveHost } from "./keyring";

export type { LiveHost };

/**
 * Live sockets end when their holder's access ends (issue 25 M-a). A socket is checked once, when it
 * opens, and then carries frames for as long as it stays open, so every change that ends or narrows
 * access must reach the sockets it covers:
 *
 * - each socket is tagged, in the Durable Object that holds it, with whose it is (`ownerTag`);
 * - the owner's Keyring shard (the object every credential change of that owner already calls)
 *   records which objects hold the owner's sockets (`noteLiveSocket`, before the socket opens);
 * - a revocation takes those objects from the shard and asks each to close the owner's sockets
 *   (`cutLiveSockets`), and the revoking request answers only after they are closed.
 *
 * A shared session's viewers are cut by the session's own object when the share ends (the object is
 * known there), through the same `cutSockets` of the host.
 */

/** Whose socket: a board user (a cookie or an API key) or an agent (one of its keys). */
export interface LiveOwner {
  kind: "user" | "agent";
  id: string;
}

/** What every object holding live sockets answers: close the sockets tagged with this owner. */
export interface LiveSocketHost extends Rpc.DurableObjectBranded {
  /** Closes the owner's sockets with `code` and `reason`; answers how many it closed. */
  cutSockets(ownerTag: string, code: number, reason: string): Promise<number>;
}

/** Close codes the client is told (4000–4999 are the application's): the credential, or the access. */
export const CREDENTIALS_CHANGED = { code: 4401, reason: "credentials changed: sign in again" } as const;
export const MEMBERSHIP_ENDED = { code: 4403, reason: "membership ended" } as const;
export const SHARE_ENDED = { code: 4403, reason: "share revoked" } as const;
/** Access continues with another role: the page reloads to draw what the new role may do. */
export const ROLE_CHANGED = { code: 4205, reason: "role changed" } as const;

/** The hibernation tag naming a socket's owner (kept across hibernation, searchable by getWebSockets). */
export const ownerTag = (owner: LiveOwner): string => `who:${owner.kind}:${owner.id}`;

/** The owner's tag as a watch request's `who` parameter carries it, or null when absent or malformed. */
export function ownerTagOf(url: string): string | null {
  const who = new URL(url).searchParams.get("who");
  return who !== null && /^who:(user|agent):\S{1,200}$/.test(who) ? who : null;
}

/**
 * Records where the owner's socket is about to open; call before forwarding the upgrade. `until`: when
 * the key that opens it expires (a scoped key, core/scopes.ts), so the Keyring closes it then.
 */
export async function noteLiveSocket(
  env: Env,
  owner: LiveOwner,
  host: LiveHost,
  until: number | null = null,
): Promise<void> {
  await keyringShard(env, await keyringTagFor(owner.id)).noteLiveHost(ownerTag(owner), host, until);
}

/** The close a socket gets when the scoped key that opened it expires. */
export const KEY_EXPIRED = { code: CREDENTIALS_CHANGED.code, reason: "key expired: sign in again" } as const;

/** Why a socket closes: the code and reason its client is told. */
export interface LiveCut {
  code: number;
  reason: string;
}

/**
 * Closes a socket that just opened when its owner's access no longer holds: `recheck` reads the
 * credential and the membership or share again (from the Keyring and D1) and answers why not, or null.
 * A revocation that commits between the upgrade's check and the socket's opening finds no socket to
 * cut; this finds it instead, since the socket's note was written before it opened and this runs after.
 */
export async function confirmLiveSocket(
  env: Env,
  owner: LiveOwner,
  host: LiveHost,
  recheck: () => Promise<LiveCut | null>,
): Promise<void> {
  const cut = await recheck();
  if (cut !== null) await liveHost(env, host).cutSockets(ownerTag(owner), cut.code, cut.reason);
}

/** The socket host of a recorded (or otherwise known) object. */
export const liveHost = (
  env: Env,
  host: Pick<LiveHost, "binding" | "name">,
): DurableObjectStub<LiveSocketHost> => namespaceOf<LiveSocketHost>(env[host.binding]).getByName(host.name);

/**
 * Closes the owner's sockets: all of them, or only those carrying `companyId`'s data. Answers once
 * every object holding one has closed them. A host that fails is logged and the others still cut: the
 * revocation itself has committed.
 */
export async function cutLiveSockets(
  env: Env,
  owner: LiveOwner,
  close: LiveCut,
  companyId: string | null = null,
): Promise<void> {
  const tag = ownerTag(owner);
  const hosts = await keyringShard(env, await keyringTagFor(owner.id)).takeLiveHosts(tag, companyId);
  await Promise.all(
    hosts.map((host) =>
      liveHost(env, host)
        .cutSockets(tag, close.code, close.reason)
        .catch((error: unknown) =>
          console.error(
            JSON.stringify({ level: "error", msg: "live socket cut failed", host, error: String(error) }),
          ),
        ),
    ),
  );
}

/** Closes `sockets` (a host's sockets of one owner); the helper every host's `cutSockets` uses. */
export function closeSockets(sockets: WebSocket[], code: number, reason: string): number {
  let closed = 0;
  for (const ws of sockets) {
    try {
      ws.close(code, reason);
      closed++;
    } catch {
      // already closing
    }
  }
  return closed;
}
