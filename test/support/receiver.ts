// The webhook receiver as a real separate process (test/support/webhook-receiver.mjs) and the checks
// end-to-end suites make on what it received: signatures in both header styles, envelopes, order.
import { type ChildProcess, spawn } from "node:child_process";
import { createHmac, timingSafeEqual } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { verifyLegacySignature, verifyWebhook } from "../../docs/examples/verify-webhook.mjs";
import { type Stack, startStack } from "./stack.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCRIPT = path.join(HERE, "webhook-receiver.mjs");
const START_TIMEOUT_MS = 10_000;

/** One request as the receiver saw it. Header names are lower case. */
export interface Received {
  seq: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Epoch ms (fractional), taken when the request arrived. */
  receivedAt: number;
  /** The status the receiver answered. */
  answered: number;
}

/** How the receiver answers one path: `statuses` first (one per request), then `status` (default 200). */
export interface Behaviour {
  statuses?: number[];
  status?: number;
  delayMs?: number;
  retryAfter?: string;
  /** Close the connection without answering (recorded as answered 0). */
  hangUp?: boolean;
}

export interface Receiver {
  readonly port: number;
  /** http://127.0.0.1:<port><path> */
  url(path: string): string;
  /** Every request recorded, including those received before a kill(), in arrival order. */
  received(path?: string): Promise<Received[]>;
  behave(path: string, behaviour: Behaviour): Promise<void>;
  /** SIGKILL: the port refuses connections until restart(). What was received is kept. */
  kill(): Promise<void>;
  /** Starts the process again on the same port, with the same behaviours. */
  restart(): Promise<void>;
  readonly running: boolean;
  stop(): Promise<void>;
}

function launch(port: number): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [SCRIPT, String(port)], { stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`webhook receiver did not start within ${START_TIMEOUT_MS} ms: ${output}`));
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString("utf8");
      const match = /\{"listening":(\d+)\}/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      resolve({ child, port: Number(match[1]) });
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`webhook receiver exited (code ${String(code)}) before listening: ${output}`));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

export async function startReceiver(): Promise<Receiver> {
  let { child, port } = await launch(0);
  let alive = true;
  /** What earlier incarnations received: the process keeps its log in memory only. */
  const previous: Received[] = [];
  const behaviours = new Map<string, Behaviour>();
  const base = () => `http://127.0.0.1:${port}`;

  const fetchAll = async (): Promise<Received[]> => {
    const response = await fetch(`${base()}/__control/deliveries`);
    return ((await response.json()) as { deliveries: Received[] }).deliveries;
  };
  const putBehaviour = async (target: string, behaviour: Behaviour): Promise<void> => {
    const response = await fetch(`${base()}/__control/behaviour`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path: target, ...behaviour }),
    });
    if (response.status !== 200) throw new Error(`receiver behaviour: ${response.status}`);
  };

  return {
    port,
    url: (target) => `${base()}${target}`,
    get running() {
      return alive;
    },
    async received(target) {
      const all = [...previous, ...(alive ? await fetchAll() : [])];
      return target === undefined ? all : all.filter((entry) => entry.path === target);
    },
    async behave(target, behaviour) {
      behaviours.set(target, behaviour);
      if (alive) await putBehaviour(target, behaviour);
    },
    async kill() {
      if (!alive) return;
      previous.push(...(await fetchAll()));
      alive = false;
      child.kill("SIGKILL");
      await exited(child);
    },
    async restart() {
      if (alive) return;
      ({ child, port } = await launch(port));
      alive = true;
      for (const [target, behaviour] of behaviours) await putBehaviour(target, behaviour);
    },
    async stop() {
      if (!alive) return;
      alive = false;
      child.kill("SIGTERM");
      await exited(child);
    },
  };
}

// ── What a delivery must look like ──────────────────────────────────────────────────────────────

export interface Payload {
  event: string;
  sessionId: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export const payloadOf = (entry: Received): Payload => JSON.parse(entry.body) as Payload;

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** `X-Webhook-Signature: sha256=<hex HMAC-SHA256(secret string, body)>`, checked independently of the docs. */
export function legacySignatureValid(secret: string, entry: Received): boolean {
  const expected = `sha256=${createHmac("sha256", secret).update(entry.body).digest("hex")}`;
  return sameText(entry.headers["x-webhook-signature"] ?? "", expected);
}

/** Standard Webhooks `v1,` signature, checked independently of the docs (any of several signatures). */
export function standardSignatureValid(secret: string, entry: Received): boolean {
  const key = secret.startsWith("whsec_")
    ? Buffer.from(secret.slice("whsec_".length), "base64")
    : Buffer.from(secret);
  const id = entry.headers["webhook-id"] ?? "";
  const timestamp = entry.headers["webhook-timestamp"] ?? "";
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${entry.body}`).digest("base64");
  const offered = (entry.headers["webhook-signature"] ?? "").split(" ");
  return offered.some((signature) => sameText(signature, `v1,${expected}`));
}

/**
 * The documented snippet (docs/examples/verify-webhook.mjs, imported as it is) as a yes/no answer for
 * one delivery: the Standard Webhooks check, which throws on a bad signature, and the legacy header.
 */
export function documentedChecks(secret: string, entry: Received): { standard: boolean; legacy: boolean } {
  let standard = false;
  try {
    verifyWebhook(secret, entry.headers, entry.body);
    standard = true;
  } catch {
    standard = false;
  }
  return {
    standard,
    legacy: verifyLegacySignature(secret, entry.headers["x-webhook-signature"], entry.body),
  };
}

/** Resolves once `probe` returns a value other than undefined; polls every 100 ms. */
export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The first arrival of each distinct `webhook-id`, in arrival order (retries collapse into one). */
export function firstArrivals(entries: readonly Received[]): Received[] {
  const seen = new Set<string>();
  return entries.filter((entry) => {
    const id = entry.headers["webhook-id"] ?? "";
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

// ── The webhooks API, as the suites call it ─────────────────────────────────────────────────────

export interface Webhook {
  id: string;
  name: string;
  url: string;
  events: string[];
  isActive: boolean;
  disabledReason?: string | null;
  sessionId?: string | null;
  /** Only in the answer to POST (shown once). */
  secret?: string;
}

export interface Delivery {
  id: string;
  webhookId: string;
  messageId: string;
  event: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
  createdAt: string;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

interface Caller {
  call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
}
type Envelope<T> = { status: boolean; message: string; data: T };

/** POST /api/webhooks/{sessionId}; fails unless 200/201 with the secret shown. */
export async function createWebhook(
  api: Caller,
  sessionId: string,
  body: { name: string; url: string; events: string[]; secret?: string; global?: boolean },
): Promise<Webhook & { secret: string }> {
  const created = await api.call<Envelope<Webhook>>("POST", `/api/webhooks/${sessionId}`, body);
  if ((created.status !== 200 && created.status !== 201) || typeof created.body?.data?.secret !== "string")
    throw new Error(`creating webhook ${body.name}: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.data as Webhook & { secret: string };
}

export async function listWebhooks(api: Caller, sessionId: string): Promise<Webhook[]> {
  const listed = await api.call<Envelope<Webhook[]>>("GET", `/api/webhooks/${sessionId}`);
  if (listed.status !== 200) throw new Error(`listing webhooks: ${listed.status}`);
  return listed.body.data;
}

export async function deliveriesOf(
  api: Caller,
  sessionId: string,
  webhookId: string,
  limit = 100,
): Promise<{ data: Delivery[]; total: number }> {
  const page = await api.call<Envelope<Delivery[]> & { total?: number; pagination?: { total?: number } }>(
    "GET",
    `/api/webhooks/${sessionId}/${webhookId}/deliveries?limit=${limit}&offset=0`,
  );
  if (page.status !== 200) throw new Error(`deliveries: ${page.status} ${JSON.stringify(page.body)}`);
  const total = page.body.total ?? page.body.pagination?.total ?? page.body.data.length;
  return { data: page.body.data, total };
}

// ── The webhook suites' common ground ─────────────────────────────────────────────────────────

/** The stack environment every webhook suite runs with: the simulator, fast retries, loopback allowed. */
export function webhookStackEnv(retryScheduleMs: string): Record<string, string> {
  return {
    SIMULATOR: "1",
    WEBHOOK_RETRY_SCHEDULE_MS: retryScheduleMs,
    WEBHOOK_ALLOWED_HOSTS: "127.0.0.1,localhost",
  };
}

/** A stack and a receiver process, started side by side. */
export async function startWebhookStack(retryScheduleMs: string): Promise<[Stack, Receiver]> {
  return Promise.all([startStack({ env: webhookStackEnv(retryScheduleMs) }), startReceiver()]);
}

let uniqueCounter = 0;
/** Session ids and paths that never collide within a run. */
export const uniqueId = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++uniqueCounter}`;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
