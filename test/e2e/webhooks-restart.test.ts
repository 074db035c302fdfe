// The outbox survives the edge going away: with the receiver down, 100 events are queued, the whole
// stack (wrangler dev and the bridge) is stopped and started again on the same state directory, the
// receiver comes back, and all 100 arrive, once each (in any order: each is retried on its own schedule).
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient } from "../support/api.ts";
import { connectedSession, type Envelope, jidPath, personJid, world } from "../support/messaging.ts";
import {
  createWebhook,
  deliveriesOf,
  firstArrivals,
  payloadOf,
  type Received,
  type Receiver,
  startReceiver,
  waitFor,
  webhookStackEnv,
} from "../support/receiver.ts";
import { type Stack, startStack } from "../support/stack.ts";

const QUEUED = 100;
/**
 * Long enough that the events are still being retried after a stack restart (about 90 s in
 * all), short enough that the attempt after the receiver comes back is at most 8 s away.
 */
const RETRY_SCHEDULE = "0,500,1000,2000,4000,8000,8000,8000,8000,8000,8000,8000,8000,8000,8000";
const ENV = webhookStackEnv(RETRY_SCHEDULE);

let stack: Stack | undefined;
let receiver: Receiver;
/** The state directory while no stack owns it (between the two stacks), removed if the test stops there. */
let orphanState: string | undefined;

beforeAll(async () => {
  [stack, receiver] = await Promise.all([startStack({ env: ENV }), startReceiver()]);
});

afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
  if (orphanState) await rm(orphanState, { recursive: true, force: true });
});

const textOf = (entry: Received) => String((payloadOf(entry).data as { content?: unknown }).content);

describe("edge restart", () => {
  it("100 undelivered events queued when the stack stops all arrive after it comes back", async () => {
    if (!stack) throw new Error("no stack");
    let api: ApiClient = await adminClient(stack.baseUrl);
    const sid = `wh-restart-${Date.now().toString(36)}`;
    await connectedSession(api, sid);
    const path = `/${sid}/restart`;
    const hook = await createWebhook(api, sid, {
      name: "restart",
      url: receiver.url(path),
      events: ["message.received"],
    });
    const peer = personJid();
    const texts = Array.from({ length: QUEUED }, (_, i) => `queued #${i}`);

    await receiver.kill();
    for (const text of texts)
      await world(api, sid, "receive", { from: peer, content: { type: "text", text } });
    // Every event is in the SessionDO (stored, so in the outbox) before the edge goes away.
    await waitFor(
      async () => {
        const history = await api.call<Envelope<unknown[]>>(
          "GET",
          `/api/chat/${sid}/${jidPath(peer)}?limit=100`,
        );
        return history.body.data?.length === QUEUED ? true : undefined;
      },
      20_000,
      `${QUEUED} messages stored`,
    );
    const queued = await waitFor(
      async () => {
        const log = await deliveriesOf(api, sid, hook.id, 100);
        return log.total === QUEUED ? log : undefined;
      },
      10_000,
      `${QUEUED} deliveries queued`,
    );
    expect(queued.data.filter((d) => d.status !== "pending")).toEqual([]);

    const stateDir = stack.stateDir;
    const first = stack;
    stack = undefined;
    orphanState = stateDir;
    await first.stop({ keepState: true });
    stack = await startStack({ env: ENV, stateDir });
    orphanState = undefined;
    api = await adminClient(stack.baseUrl);
    await receiver.restart();

    const entries = await waitFor(
      async () => {
        const all = await receiver.received(path);
        const ok = all.filter((e) => e.answered === 200);
        return firstArrivals(ok).length >= QUEUED ? all : undefined;
      },
      90_000,
      `${QUEUED} events at the receiver after the restart`,
    );
    const ok = entries.filter((e) => e.answered === 200);
    expect(ok.map(textOf).sort()).toEqual([...texts].sort());
    expect(new Set(ok.map((e) => e.headers["webhook-id"])).size).toBe(QUEUED);
    expect(ok.every((e) => payloadOf(e).sessionId === sid)).toBe(true);

    const log = await deliveriesOf(api, sid, hook.id, 100);
    expect(log.total).toBe(QUEUED);
    expect(log.data.filter((d) => d.status !== "delivered")).toEqual([]);
  });
});
