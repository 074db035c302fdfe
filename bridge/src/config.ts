/** The bridge's settings, from the environment, validated once at start. */
import { hostname } from "node:os";
import { z } from "zod";
import { toWebSocketUrl } from "./shared/edge-url.ts";
import { DEFAULT_LOG_LEVEL, LOG_LEVELS, type LogLevelSetting } from "./shared/log.ts";
import { DEFAULT_VERSION_URL } from "./whatsapp/version.ts";

export { toWebSocketUrl };

const EnvSchema = z.object({
  EDGE_URL: z
    .string({ error: "EDGE_URL is required (the edge's http(s):// or ws(s):// address)" })
    .trim()
    .pipe(z.url({ protocol: /^(https?|wss?)$/, error: "EDGE_URL must be an http, https, ws or wss URL" })),
  BRIDGE_TOKEN: z.string({ error: "BRIDGE_TOKEN is required" }).min(1, "BRIDGE_TOKEN is required"),
  BRIDGE_ID: z.string().trim().min(1).max(128).optional(),
  BRIDGE_CAPACITY: z.coerce.number().int().min(1).max(100_000).default(1000),
  SIMULATOR: z.string().optional(),
  /** How often the simulator issues a new QR (default 20000, as WhatsApp); tests shorten it. */
  SIMULATOR_QR_INTERVAL_MS: z.coerce.number().int().min(200).max(600_000).optional(),
  /** Where Baileys dials instead of WhatsApp: tests (test/fake-whatsapp) or a self-hosted proxy. */
  WA_WEBSOCKET_URL: z
    .string()
    .trim()
    .pipe(z.url({ protocol: /^wss?$/, error: "WA_WEBSOCKET_URL must be a ws or wss URL" }))
    .optional(),
  /**
   * The root key a non-WhatsApp endpoint's certificate chain leads to (64 hex digits): the fake
   * WhatsApp in tests. Only with WA_WEBSOCKET_URL: WhatsApp's own root stays pinned otherwise.
   */
  WA_CERT_ROOT_KEY: z
    .string()
    .trim()
    .regex(/^[0-9a-fA-F]{64}$/, "WA_CERT_ROOT_KEY must be 64 hex digits (a 32-byte public key)")
    .optional(),
  /**
   * The host (`name[:port]`, HTTPS) that stands in for WhatsApp's default media host, where history
   * chunks are fetched by direct path: only with WA_WEBSOCKET_URL (the fake WhatsApp's media host).
   */
  WA_MEDIA_HOST: z
    .string()
    .trim()
    .regex(
      /^[A-Za-z0-9.-]+(:\d{1,5})?$/,
      "WA_MEDIA_HOST must be a host name or address, with an optional :port",
    )
    .optional(),
  /** The WhatsApp Web version to announce (`2.3000.1043857760`), when WhatsApp refuses the bundled one. */
  WA_VERSION: z
    .string()
    .trim()
    .regex(/^\d{1,6}\.\d{1,6}\.\d{1,12}$/, "WA_VERSION must look like 2.3000.1043857760")
    .optional(),
  /**
   * Where the current WhatsApp Web version is read when WA_VERSION does not pin one (sw.js, Baileys'
   * JSON, or a plain `2.3000.n`); `off` never fetches. Default: WhatsApp Web's service worker.
   */
  WA_VERSION_URL: z
    .string()
    .trim()
    .refine(
      (value) => value === "off" || /^https?:\/\/\S+$/.test(value),
      "WA_VERSION_URL must be an http(s) URL or off",
    )
    .optional(),
  /** History sync on pairing: keep messages of the last N days (0: none); default 30. */
  WA_HISTORY_DAYS: z.coerce.number().int().min(0).max(3650).default(30),
  /** …and at most the newest N messages of each chat; default 100. */
  WA_HISTORY_MESSAGES: z.coerce.number().int().min(0).max(100_000).default(100),
  LOG_LEVEL: z
    .enum(LOG_LEVELS, { error: `LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}` })
    .default(DEFAULT_LOG_LEVEL),
});

export interface BridgeConfig {
  /** ws:// or wss:// origin (and path prefix, if any) of the edge, without a trailing slash. */
  edgeUrl: string;
  token: string;
  bridgeId: string;
  capacity: number;
  /** Use the in-memory WhatsApp simulator instead of Baileys (tests, demos). */
  simulator: boolean;
  /** The simulator's QR refresh interval, when not its default. */
  simulatorQrIntervalMs?: number;
  /** Overrides WhatsApp's WebSocket endpoint (tests against the fake WhatsApp, self-hosted proxies). */
  waWebSocketUrl?: string;
  /** Another root for the server's certificate chain (with `waWebSocketUrl` only); absent: WhatsApp's. */
  waRootKey?: Buffer;
  /** Stands in for WhatsApp's default media host (WA_MEDIA_HOST, with `waWebSocketUrl` only). */
  waMediaHost?: string;
  /** [major, minor, patch] for Baileys' `version` (WA_VERSION); absent: fetched or bundled. */
  waVersion?: [number, number, number];
  /** Where the current version is read (WA_VERSION_URL); null: never fetched. */
  waVersionUrl: string | null;
  /** How much of the history sent on pairing is kept (WA_HISTORY_DAYS, WA_HISTORY_MESSAGES). */
  history: { days: number; messagesPerChat: number };
  /** Which log lines are written (LOG_LEVEL, default warn). */
  logLevel: LogLevelSetting;
}

const versionOf = (text: string): [number, number, number] => {
  const [major = 0, minor = 0, patch = 0] = text.split(".").map(Number);
  return [major, minor, patch];
};

/** Throws an Error listing every problem (without echoing values: one of them is a secret). */
export function loadConfig(env: Record<string, string | undefined>): BridgeConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new Error(
      `invalid bridge configuration: ${parsed.error.issues.map((issue) => issue.message).join("; ")}`,
    );
  }
  if (parsed.data.WA_MEDIA_HOST && !parsed.data.WA_WEBSOCKET_URL) {
    throw new Error(
      "invalid bridge configuration: WA_MEDIA_HOST applies only with WA_WEBSOCKET_URL (WhatsApp's media host otherwise)",
    );
  }
  if (parsed.data.WA_CERT_ROOT_KEY && !parsed.data.WA_WEBSOCKET_URL) {
    throw new Error(
      "invalid bridge configuration: WA_CERT_ROOT_KEY applies only with WA_WEBSOCKET_URL (WhatsApp's own root key is pinned)",
    );
  }
  const {
    EDGE_URL,
    BRIDGE_TOKEN,
    BRIDGE_ID,
    BRIDGE_CAPACITY,
    SIMULATOR,
    SIMULATOR_QR_INTERVAL_MS,
    WA_WEBSOCKET_URL,
    WA_CERT_ROOT_KEY,
    WA_MEDIA_HOST,
    WA_VERSION,
    WA_VERSION_URL,
    WA_HISTORY_DAYS,
    WA_HISTORY_MESSAGES,
    LOG_LEVEL,
  } = parsed.data;
  return {
    edgeUrl: toWebSocketUrl(EDGE_URL),
    token: BRIDGE_TOKEN,
    bridgeId: BRIDGE_ID ?? `${hostname()}-${process.pid}`,
    capacity: BRIDGE_CAPACITY,
    simulator: SIMULATOR === "1",
    simulatorQrIntervalMs: SIMULATOR_QR_INTERVAL_MS,
    ...(WA_WEBSOCKET_URL ? { waWebSocketUrl: WA_WEBSOCKET_URL } : {}),
    ...(WA_CERT_ROOT_KEY ? { waRootKey: Buffer.from(WA_CERT_ROOT_KEY, "hex") } : {}),
    ...(WA_MEDIA_HOST ? { waMediaHost: WA_MEDIA_HOST } : {}),
    ...(WA_VERSION ? { waVersion: versionOf(WA_VERSION) } : {}),
    waVersionUrl: WA_VERSION_URL === "off" ? null : (WA_VERSION_URL ?? DEFAULT_VERSION_URL),
    history: { days: WA_HISTORY_DAYS, messagesPerChat: WA_HISTORY_MESSAGES },
    logLevel: LOG_LEVEL,
  };
}
