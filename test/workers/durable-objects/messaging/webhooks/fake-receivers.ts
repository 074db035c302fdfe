// The recording fake the webhook delivery suites send to: workerd tests cannot run an HTTP receiver, so
// outbound fetch to hooks.example.com is answered here (the SessionDO shares the test's isolate), and
// helpers to drive a connected session's deliveries and read its log.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll, vi } from "vitest";
import type { Outcome } from "../../../../../durable-objects/messaging/context";
import type {
  DeliveryRecord,
  WebhookEndpoint,
} from "../../../../../durable-objects/messaging/webhooks/types";
import { sessionObject } from "../../../../../durable-objects/session/contract";
import { newWebhookSecret } from "../../../../../workers/webhooks/signing";
import { type ConnectedSession, connect, ownedSession } from "../../../connected-session";
import { emit } from "../../../fake-bridge";
import { PATIENCE_MS } from "../../../patience";

export type Envelope<T> = { status: boolean; data: T };
export type Received = { url: string; headers: Headers; body: string };
export type Answer = (request: Received) => Response | Promise<Response>;

export const ME = "628111000111@s.whatsapp.net";
export const PEER = "628122200022@s.whatsapp.net";
export const FROM_PEER = { chat: PEER, sender: PEER, fromMe: false, pushName: "Peer" };

export const received: Received[] = [];
export const answers = new Map<string, Answer>();

const realFetch = globalThis.fetch;

/** Receivers live under hooks.example.com; one without an answer set is down (503), never the network. */
beforeAll(() => {
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (new URL(request.url).hostname !== "hooks.example.com") return realFetch(input, init);
    const entry = { url: request.url, headers: request.headers, body: await request.text() };
    const answer = answers.get(request.url);
    if (!answer) return new Response("no receiver", { status: 503 });
    received.push(entry);
    return answer(entry);
  });
});

afterAll(() => {
  vi.restoreAllMocks();
});

afterEach(() => {
  received.length = 0;
  answers.clear();
});

export type Connected = ConnectedSession & { seq: number };

/** A session whose endpoints are pushed before it starts, so every event it emits is theirs. */
export async function connected(endpoints: WebhookEndpoint[]): Promise<Connected> {
  const owned = await ownedSession("Hooks");
  await sessionObject(env, owned.id).setWebhooks(owned.id, endpoints);
  return { ...(await connect(owned, ME)), seq: 2 };
}

export type Hook = WebhookEndpoint;
export const url = (id: string) => `https://hooks.example.com/${id}`;
/** Plaintext secrets, as copies pushed before sealing hold them (secrets.test.ts covers sealed ones). */
export const endpoint = (id: string, events: string[], extra: Partial<Hook> = {}): Hook => ({
  ...{ id, url: url(id), secret: newWebhookSecret(), secretSealed: false, events, isActive: true },
  ...extra,
});

/** A webhook row in D1 (the directory the Worker owns), for the paths that read or update it. */
export const insertHook = (hook: Hook, userId: string, sessionId: string | null) =>
  env.DB.prepare(
    `INSERT INTO webhooks (id, user_id, session_id, name, url, secret, events, is_active, created_at, updated_at)
     VALUES (?, ?, ?, 'hook', ?, ?, ?, 1, 1, 1)`,
  )
    .bind(hook.id, userId, sessionId, hook.url, hook.secret, JSON.stringify(hook.events))
    .run();

export const incoming = (s: Connected, id: string) =>
  emit(s.link, 1, s.seq++, {
    kind: "message",
    live: true,
    message: { ...FROM_PEER, id, timestamp: Date.now(), content: { type: "text", text: id } },
  });

export const stub = (s: { id: string }) => sessionObject(env, s.id);

export async function sessionCall<T>(s: Connected, name: string, input: unknown): Promise<Outcome<T>> {
  return (await stub(s).call(s.id, name, input)) as Outcome<T>;
}

export async function log(s: Connected, webhookId: string): Promise<DeliveryRecord[]> {
  const input = { webhookId, limit: 100, offset: 0 };
  const outcome = await sessionCall<{ items: DeliveryRecord[] }>(s, "webhook.deliveries", input);
  if (!outcome.ok) throw new Error(outcome.error);
  return outcome.data.items.slice().reverse(); // oldest first reads better in assertions
}

/** Runs the alarm until `check` holds (the real alarm may get there first; both are fine). */
export async function until(
  s: { id: string },
  check: () => boolean | Promise<boolean>,
  timeoutMs = PATIENCE_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out; received ${received.length} requests`);
    await runDurableObjectAlarm(stub(s));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Makes every waiting retry due now. */
export const dueNow = (s: Connected) =>
  runInDurableObject(stub(s), (_instance, state) => {
    state.storage.sql.exec("UPDATE webhook_deliveries SET next_at = 0 WHERE status = 'pending'");
  });

export const bodyOf = (r: Received) =>
  JSON.parse(r.body) as { event: string; sessionId: string; data: { id?: string } };
export const to = (id: string) => received.filter((r) => r.url.endsWith(`/${id}`));
export const ok = () => new Response("ok");
