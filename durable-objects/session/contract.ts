import type { Env } from "../../workers/core/env";
import { namespaceOf } from "../../workers/core/env";
import type { SessionState } from "../../workers/db/schema";
import type { SessionConfigCopy } from "../messaging/config/session";
import type { Outcome } from "../messaging/context";
import type { SessionLimits } from "../messaging/limits/store";
import type { StoredMedia } from "../messaging/media/store";
import type { SessionCounts } from "../messaging/messages/store";
import type { WebhookEndpoint } from "../messaging/webhooks/types";
import type { statusOf } from "./lifecycle";
import type { StoredProxy } from "./proxy";
import type { SessionRecord } from "./storage";

export interface SessionSnapshot {
  state: SessionState;
  status: ReturnType<typeof statusOf>;
  qr: string | null;
  qrImage: string | null;
  me: SessionRecord["me"];
  connectedAt: number | null;
  lastDisconnect: string | null;
  /** The WhatsApp Web version that last connected and where it came from (null: never, or simulator). */
  waVersion: SessionRecord["waVersion"];
  /** The session's proxy as it may be shown (`scheme://host:port`, never credentials), or null. */
  proxy: string | null;
  /** A bridge holds the lease and its link is up. */
  hasInstance: boolean;
  epoch: number;
  counts: SessionCounts;
  /** WhatsApp's limits on the account as last announced (reach-out timelock, new-chat cap). */
  limits: SessionLimits;
}

/**
 * What the Worker and the BridgeFleet may ask of a messaging session's Durable Object (SessionDO
 * implements it). Every method takes the session's internal id: the object records it the first
 * time it is named. Bridges reach the object over its WebSocket instead (`fetch`).
 */
export interface SessionObject extends Rpc.DurableObjectBranded {
  /** Runs a named messaging handler (session/api.ts); the gateway calls it through `callSession`. */
  call(sessionId: string, name: string, input: unknown): Promise<Outcome<unknown>>;
  /** The Worker pushes settings and bot configuration here whenever they change. */
  configure(sessionId: string, copy: SessionConfigCopy): Promise<void>;
  /** The Worker pushes the session's webhook endpoints here whenever they change. */
  setWebhooks(sessionId: string, endpoints: WebhookEndpoint[]): Promise<void>;
  /** The bridge holding the session's lease, or null: only it may move the session's media. */
  leaseHolder(sessionId: string): Promise<string | null>;
  /** Media the bridge fetches (an upload to send). */
  media(sessionId: string, ref: string): Promise<StoredMedia | null>;
  /**
   * The stored record (`raw`, as JSON text: a recursive JSON type is too deep for RPC stub types) of a
   * message this account sent, for the lease holder's resends.
   */
  sentMessage(sessionId: string, messageId: string): Promise<string | null>;
  /** Drives the simulated world (only routed when SIMULATOR=1). */
  simulateWorld(sessionId: string, args: Record<string, unknown>): Promise<Outcome<unknown>>;
  /** Drives the simulated WhatsApp network (only routed when SIMULATOR=1). */
  simulate(sessionId: string, name: "sim.scan" | "sim.disconnect", code?: number): Promise<Outcome<unknown>>;
  snapshot(sessionId: string): Promise<SessionSnapshot>;
  /** The snapshot once a QR shows or the session leaves starting/reconnecting, at the latest after `waitMs`. */
  awaitQr(sessionId: string, waitMs: number): Promise<SessionSnapshot>;
  start(sessionId: string): Promise<Outcome<SessionSnapshot>>;
  stop(sessionId: string): Promise<Outcome<SessionSnapshot>>;
  restart(sessionId: string): Promise<Outcome<SessionSnapshot>>;
  /** Stores the sealed proxy (null: none); a running session restarts through it. */
  setProxy(sessionId: string, proxy: StoredProxy | null): Promise<Outcome<SessionSnapshot>>;
  /** Unlinks the device. Without a live bridge the credentials are still discarded. */
  logout(sessionId: string): Promise<Outcome<SessionSnapshot>>;
  pair(sessionId: string, phoneNumber: string): Promise<Outcome<{ pairingCode: string }>>;
  /** Logs out if possible and erases every trace of the session in the object. */
  destroy(sessionId: string): Promise<void>;
  /** (BridgeFleet) Hands the session to `bridge` under a new epoch; any other bridge's link is cut. */
  grantLease(sessionId: string, bridge: string): Promise<number>;
  /** (BridgeFleet) No bridge can hold the session right now; it waits for one. */
  revokeLease(sessionId: string): Promise<void>;
}

/** The Durable Object of the session with this internal id (never a client-supplied slug). */
export const sessionObject = (env: Env, sessionId: string): DurableObjectStub<SessionObject> =>
  namespaceOf<SessionObject>(env.SESSION).getByName(sessionId);
