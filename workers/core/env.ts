import { countDurableObjectHop } from "../meter/meter";
import type { Actor, CredentialGuard } from "./actor";
import type { Principal } from "./principal";

/**
 * Bindings declared in wrangler.toml, plus secrets from `wrangler secret put` (or .dev.vars locally).
 *
 * The Durable Object namespaces are untyped here, so that this module, which every layer imports,
 * imports nothing of ours but the identity types. Each object's typed stub comes from its contract,
 * next to the code it runs: `sessionObject()` (durable-objects/session/contract.ts), `fleetObject()`
 * (durable-objects/fleet/contract.ts), `issueObject()` (control/issues/object.ts), `keyringShard()`
 * (auth/keyring.ts) and `runDispatcher()` (control/wakes/nudge.ts).
 */
export interface Env {
  DB: D1Database;
  SESSION: DurableObjectNamespace<Rpc.DurableObjectBranded>;
  ISSUE: DurableObjectNamespace<Rpc.DurableObjectBranded>;
  FLEET: DurableObjectNamespace<Rpc.DurableObjectBranded>;
  KEYRING: DurableObjectNamespace<Rpc.DurableObjectBranded>;
  RUNS: DurableObjectNamespace<Rpc.DurableObjectBranded>;
  /** One CompanyFeed per company: the board's live socket (`companyFeed()` in control/live). */
  COMPANY_FEED: DurableObjectNamespace<Rpc.DurableObjectBranded>;
  /** One McpSession per MCP session (`mcpSessionObject()` in workers/mcp/session-object.ts). */
  MCP_SESSION: DurableObjectNamespace<Rpc.DurableObjectBranded>;
  /** Company logos (and, later, package archives). Local R2 under `wrangler dev`. */
  ASSETS: R2Bucket;
  /** WhatsApp media (workers/media): uploads to send and received media, read by signed URL too. */
  MEDIA: R2Bucket;
  /** Per-kind media limits in MB, e.g. "video=100,document=500" (defaults: MEDIA_KIND_LIMITS). */
  MEDIA_LIMITS_MB?: string;
  /**
   * The public origin of this deployment (https://api.example.com): webhooks carry absolute signed
   * media URLs under it. Without it they carry the path only.
   */
  PUBLIC_URL?: string;
  /** OAuth clients, grants and hashed tokens (workers/oauth, @cloudflare/workers-oauth-provider). */
  OAUTH_KV: KVNamespace;
  /** "production" (wrangler.toml default), "development" (.dev.vars) or "test" (vitest). */
  ENVIRONMENT: string;
  ADMIN_EMAIL?: string;
  ADMIN_PASSWORD?: string;
  /** Bootstrap credential that opens the bridge link only as `local-bridge` (see gateway/bridges). */
  BRIDGE_TOKEN?: string;
  /** Milliseconds a bridge may stay away before its sessions move (default 15000). */
  FLEET_GRACE_MS?: string;
  /** Milliseconds a `GET /api/sessions/{id}/qr` waits for a starting session's first QR (default 10000). */
  QR_WAIT_MS?: string;
  /** Milliseconds without a heartbeat after which a bridge link counts as dead (default 45 s). */
  BRIDGE_LINK_STALE_MS?: string;
  /** Broadcast gap between recipients, "min-max" in ms (default "10000-20000"); tests shorten it. */
  BROADCAST_GAP_MS?: string;
  /** Attempts before a scheduled message whose session stays down is FAILED (default 10). */
  SCHEDULER_RETRY_LIMIT?: string;
  /** Wait between those attempts in ms (default 60000). */
  SCHEDULER_RETRY_MS?: string;
  /** Comma-separated hosts webhooks may target even though private (local development: 127.0.0.1,localhost). */
  WEBHOOK_ALLOWED_HOSTS?: string;
  /** Waits before each webhook attempt in ms, comma-separated; its length is the attempt count (tests). */
  WEBHOOK_RETRY_SCHEDULE_MS?: string;
  /** 32 random bytes, base64: the AES-256-GCM key for company secrets and webhook signing secrets. */
  SECRETS_MASTER_KEY?: string;
  /** "1" enables the simulator control routes (`/api/sessions/{id}/simulate/*`). Never in production. */
  SIMULATOR?: string;
  /**
   * Days a company's activity log (its public events, docs/events.md) keeps entries; unset or 0: kept
   * for good. Pruned hourly; a cursor older than what is kept answers 410.
   */
  ACTIVITY_RETENTION_DAYS?: string;
  /** GitHub API base for `github` package sources (default https://api.github.com); tests use a mimic. */
  GITHUB_API_URL?: string;
}

export type Variables = {
  requestId: string;
  /** Set by the authentication middleware on every non-public /api route. */
  principal: Principal;
  /** The dashboard's own in-process API calls carry the viewer it authenticated (auth/in-process.ts). */
  vouchedPrincipal?: Principal;
  /**
   * Set only on an in-process call the company line makes for a member who answered on WhatsApp
   * (auth/in-process.ts `vouchForLineAnswer`): decisions record "via WhatsApp". Nothing from outside sets it.
   */
  answeredVia?: "whatsapp";
  /**
   * Set with `principal` for board users; for agent keys (control-plane routes only) it is the only
   * identity, and `principal` is unset. Control-plane handlers read this, never `principal`.
   */
  actor: Actor;
  /**
   * Set when a guarded write was authenticated from the isolate's recent answer for its key: its
   * commit must carry this guard (auth/credential-guard.ts, auth/middleware.ts `withCredentialGuard`).
   */
  credentialGuard?: CredentialGuard;
};

export type AppEnv = { Bindings: Env; Variables: Variables };

export function isProduction(env: Env): boolean {
  return env.ENVIRONMENT !== "development" && env.ENVIRONMENT !== "test";
}

/**
 * A namespace typed by the contract its class implements. The class declares `implements` that
 * contract, so the compiler checks the class against it; wrangler.toml binds the name to the class.
 * Namespace types are invariant in their class, hence the one cast through `unknown`, here only.
 */
export function namespaceOf<Contract extends Rpc.DurableObjectBranded>(
  namespace: DurableObjectNamespace<Rpc.DurableObjectBranded>,
): DurableObjectNamespace<Contract> {
  let metered = meteredNamespaces.get(namespace);
  if (!metered) {
    metered = meteredNamespace(namespace);
    meteredNamespaces.set(namespace, metered);
  }
  return metered as unknown as DurableObjectNamespace<Contract>;
}

/** One wrapper per binding for the isolate's life: a new Proxy per call was garbage on every request. */
const meteredNamespaces = new WeakMap<object, DurableObjectNamespace<Rpc.DurableObjectBranded>>();

/**
 * The namespace counting the stubs it hands out (meter/meter.ts: the write budget tests read it). Each
 * stub our code takes is used for one call, so a stub is a hop; the stub itself stays the runtime's
 * own object, which the test runtime's `runInDurableObject` and `runDurableObjectAlarm` require.
 */
function meteredNamespace<Contract extends Rpc.DurableObjectBranded>(
  namespace: DurableObjectNamespace<Contract>,
): DurableObjectNamespace<Contract> {
  return new Proxy(namespace, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property !== "get" && property !== "getByName") return value.bind(target);
      return (...args: unknown[]) => {
        countDurableObjectHop();
        return Reflect.apply(value, target, args);
      };
    },
  });
}
