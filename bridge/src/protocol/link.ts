/**
 * The wire protocol of the bridge link: every frame between a bridge and the edge, as zod schemas
 * that both ends validate (the Durable Objects in workerd, the bridge in Node). This file imports
 * nothing but zod so it runs in both places.
 *
 * Two kinds of WebSocket, both dialled by the bridge with `Authorization: Bearer <its credential>`
 * (a `swb_` token bound to its id; `BRIDGE_TOKEN` only for the local bootstrap bridge):
 *
 * 1. The fleet socket, `GET /bridge/v1/fleet?bridge=<bridgeId>&capacity=<n>`, to the BridgeFleet DO.
 *    The fleet tells the bridge which sessions to hold (`assign`) and to let go (`unassign`).
 * 2. One session socket per held session, `GET /bridge/v1/sessions/<sessionId>?bridge=<bridgeId>`,
 *    to that session's SessionDO. The DO accepts only the bridge that holds the current lease; it
 *    answers `welcome` with the lease epoch and the stored Baileys auth state, then exchanges events
 *    (bridge → DO, each acknowledged once durable) and commands (DO → bridge, each answered once).
 */
import { z } from "zod";
import { NetworkEventSchema } from "./messaging.ts";
import { ProxyUrlSchema } from "./proxy.ts";

export const BRIDGE_PROTOCOL_VERSION = 1;

/** WebSocket close codes the edge uses; the bridge reacts to each as documented. */
export const CLOSE = {
  /** The lease moved to another bridge: drop the WhatsApp socket, do not reconnect this session. */
  LEASE_LOST: 4001,
  /** The session was stopped or deleted: drop it, do not reconnect. */
  RELEASED: 4002,
  /** The bridge's credential was revoked: its sessions have moved; a person must give it a new one. */
  REVOKED: 4003,
  /** A frame failed validation or carried a stale epoch. */
  BAD_FRAME: 4400,
} as const;

/**
 * The upgrade status when this bridge id already has a live connection: a second process with the
 * same id (or a restart that beat the old socket's close) waits instead of kicking the first one off.
 */
export const ALREADY_LINKED = 423;

/**
 * Every link says `ping` each `intervalMs`; the edge's objects answer `pong` without waking (an
 * auto-response) and remember when. A link not heard from for `staleAfterMs` is dead: a half-open TCP
 * connection never closes by itself, and it must neither hold an id nor keep sessions from moving.
 */
export const LINK_HEARTBEAT = {
  ping: "ping",
  pong: "pong",
  intervalMs: 15_000,
  staleAfterMs: 45_000,
} as const;

const Json = z.json();

/** Baileys auth state, serialised with BufferJSON: `creds` plus signal keys by `<type>:<id>`. */
export const AuthStateSchema = z.object({
  creds: Json.nullable(),
  keys: z.record(z.string().max(256), Json),
});
export type AuthState = z.infer<typeof AuthStateSchema>;

/** `2.3000.1043857760` and its source (bridge/src/whatsapp/version.ts). */
export const WaVersionSchema = z.object({
  version: z.string().regex(/^\d{1,6}\.\d{1,6}\.\d{1,12}$/),
  source: z.enum(["pinned", "fetched", "edge", "bundled"]),
});
export type WaVersionInfo = z.infer<typeof WaVersionSchema>;

export const MeSchema = z.object({ id: z.string().max(128), name: z.string().max(256).optional() });
export type Me = z.infer<typeof MeSchema>;

/** What a WhatsApp socket's close means for the session, decided by the bridge's reconnect policy. */
export const NEXT_STATES = ["reconnecting", "network_error", "stopped", "logged_out", "failed"] as const;

// ── Session socket: bridge → SessionDO ──────────────────────────────────────────────────────────

const LifecycleEventSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("qr"),
    qr: z.string().min(1).max(1024),
    /** PNG data URL of the QR, rendered by the bridge (Node has `qrcode`'s PNG encoder). */
    image: z
      .string()
      .startsWith("data:image/png;base64,")
      .max(64 * 1024),
  }),
  z.object({ kind: z.literal("connecting") }),
  z.object({
    kind: z.literal("connected"),
    me: MeSchema,
    /** The WhatsApp Web version that connected and where it came from (real WhatsApp only). */
    waVersion: WaVersionSchema.optional(),
  }),
  /**
   * The account's own name changed while connected: set on the phone or by this device (the push-name
   * app-state setting, `setting_pushName`), or learned from the account's own messages.
   */
  z.object({ kind: z.literal("me"), me: MeSchema }),
  z.object({
    kind: z.literal("disconnected"),
    code: z.number().int(),
    reason: z.string().max(512),
    next: z.enum(NEXT_STATES),
  }),
  /**
   * Auth state write-through: `creds` replaces the stored creds when present (null clears them);
   * each key is upserted, or deleted when its value is null.
   */
  z.object({
    kind: z.literal("auth"),
    creds: Json.nullable().optional(),
    keys: z.record(z.string().max(256), Json.nullable()).optional(),
  }),
]);

export type LifecycleEvent = z.infer<typeof LifecycleEventSchema>;
export const LIFECYCLE_KINDS: ReadonlySet<string> = new Set(
  LifecycleEventSchema.options.map((o) => o.shape.kind.value),
);

/** Lifecycle events (above) and what the network reports about messages, chats and groups. */
export const SessionEventSchema = z.discriminatedUnion("kind", [
  ...LifecycleEventSchema.options,
  ...NetworkEventSchema.options,
]);
export type SessionEvent = z.infer<typeof SessionEventSchema>;

export const BridgeToSessionSchema = z.discriminatedUnion("type", [
  /** `seq` counts from 1 per (session, epoch); the DO applies each seq once and acks it. */
  z.object({
    type: z.literal("event"),
    epoch: z.number().int().positive(),
    seq: z.number().int().positive(),
    event: SessionEventSchema,
  }),
  z.object({
    type: z.literal("result"),
    epoch: z.number().int().positive(),
    id: z.string().min(1).max(64),
    ok: z.boolean(),
    /**
     * Not validated here: every answer is parsed by the schema of the command it answers (a sent
     * message by WireMessageSchema, …), and a generic deep JSON check of each one costs the send path.
     */
    data: z.unknown().optional(),
    error: z.string().max(1024).optional(),
    /** For a failed `wa` operation: the HTTP-like status the edge answers with (operations.ts). */
    status: z.number().int().min(400).max(599).optional(),
  }),
]);
export type BridgeToSession = z.infer<typeof BridgeToSessionSchema>;

// ── Session socket: SessionDO → bridge ──────────────────────────────────────────────────────────

/**
 * `wa` carries a WhatsApp operation (operations.ts) as its args; `sim` drives the simulated network
 * (its args say what to do) and is refused by a bridge on real WhatsApp.
 */
export const COMMAND_NAMES = [
  "start",
  "stop",
  "logout",
  "pair",
  "wa",
  "sim",
  "sim.scan",
  "sim.disconnect",
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

export const SessionToBridgeSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("welcome"),
    epoch: z.number().int().positive(),
    /** Whether the WhatsApp socket should be open now. */
    desired: z.enum(["running", "stopped"]),
    auth: AuthStateSchema,
    /** Highest event seq of this epoch already stored; the bridge drops those from its replay queue. */
    lastSeq: z.number().int().nonnegative(),
    /** The WhatsApp Web version that last connected this session: the bridge's fallback offline. */
    waVersion: z
      .string()
      .regex(/^\d{1,6}\.\d{1,6}\.\d{1,12}$/)
      .optional(),
    /** The session's proxy for WhatsApp and media (`socks5://…`, `http://…`); null or absent: direct. */
    proxy: ProxyUrlSchema.nullable().optional(),
  }),
  z.object({ type: z.literal("ack"), seq: z.number().int().positive() }),
  z.object({
    type: z.literal("command"),
    id: z.string().min(1).max(64),
    name: z.enum(COMMAND_NAMES),
    /** Checked by the schema of the command it belongs to (an operation, a simulator action, …). */
    args: z.record(z.string(), z.unknown()),
    /** Epoch milliseconds after which the edge no longer waits for the result. */
    deadline: z.number().int(),
  }),
]);
export type SessionToBridge = z.infer<typeof SessionToBridgeSchema>;

// ── Fleet socket ────────────────────────────────────────────────────────────────────────────────

export const BridgeToFleetSchema = z.discriminatedUnion("type", [
  /** Sent on every (re)connect: the sessions the bridge still holds, so a quick return keeps them. */
  z.object({
    type: z.literal("hello"),
    version: z.literal(BRIDGE_PROTOCOL_VERSION),
    sessions: z.array(z.string().max(64)).max(100_000),
  }),
  /** The bridge let a session go (stopped, logged out, or it could not hold it). */
  z.object({ type: z.literal("released"), session: z.string().max(64) }),
]);
export type BridgeToFleet = z.infer<typeof BridgeToFleetSchema>;

export const FleetToBridgeSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("assign"), session: z.string().max(64) }),
  z.object({ type: z.literal("unassign"), session: z.string().max(64) }),
]);
export type FleetToBridge = z.infer<typeof FleetToBridgeSchema>;

/** Parses one text frame; `null` for bad JSON or a frame outside the schema. */
export function parseFrame<T>(schema: z.ZodType<T>, text: string): T | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = schema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}
