// Each delivery is attempted and retried on its own schedule: an event the receiver keeps rejecting
// holds back nothing else (later events, redeliveries), one webhook never has more than
// MAX_IN_FLIGHT_PER_WEBHOOK attempts in flight, and a flood of contact.update leaves a slot free for
// everything else. Against the recording fake in fake-receivers.ts.
import { describe, expect, it } from "vitest";
import {
  BULK_SLOTS,
  MAX_IN_FLIGHT_PER_WEBHOOK as CAP,
} from "../../../../../durable-objects/messaging/webhooks/slots";
import type { DeliveryRecord } from "../../../../../durable-objects/messaging/webhooks/types";
import { emit } from "../../../fake-bridge";
import {
  answers,
  bodyOf,
  connected,
  dueNow,
  endpoint,
  incoming,
  log,
  ok,
  sessionCall,
  to,
  until,
} from "./fake-receivers";

describe("per-event delivery", () => {
  it("retries an event the receiver keeps rejecting on its own schedule; later events go at once", async () => {
    const hook = endpoint("poisoned", ["message.received"]);
    answers.set(hook.url, (r) => new Response(null, { status: bodyOf(r).data.id === "E-1" ? 500 : 204 }));
    const s = await connected([hook]);
    await incoming(s, "E-1");
    await until(s, () => to("poisoned").length === 1);
    await incoming(s, "E-2");
    await incoming(s, "E-3");
    // Well inside E-1's first retry wait (5 s): E-2 and E-3 do not queue behind it.
    await until(s, () => to("poisoned").length === 3);
    const [poisoned, ...later] = await log(s, "poisoned");
    expect(later.map((d) => [d.status, d.attempts])).toEqual([
      ["delivered", 1],
      ["delivered", 1],
    ]);
    expect(poisoned).toMatchObject({ status: "pending", attempts: 1, statusCode: 500, error: "HTTP 500" });
    const wait = Date.parse(poisoned?.nextAttemptAt ?? "") - Date.now();
    expect(wait).toBeGreaterThan(5_000 * 0.9 - 2_000);
    expect(wait).toBeLessThanOrEqual(5_000 * 1.1);
    await dueNow(s);
    await until(s, () => to("poisoned").length === 4);
    expect(to("poisoned").map((r) => bodyOf(r).data.id)).toEqual(["E-1", "E-2", "E-3", "E-1"]);
    expect((await log(s, "poisoned"))[0]).toMatchObject({ status: "pending", attempts: 2 });
  });

  it(`never has more than ${CAP} deliveries of one webhook in flight, and uses them all`, async () => {
    const hook = endpoint("slow", ["message.received"]);
    const other = endpoint("other-slow", ["message.received"]);
    let flying = 0;
    let peak = 0;
    answers.set(hook.url, async () => {
      peak = Math.max(peak, ++flying);
      await new Promise((resolve) => setTimeout(resolve, 150));
      flying--;
      return ok();
    });
    answers.set(other.url, ok);
    const s = await connected([hook, other]);
    const ids = Array.from({ length: 3 * CAP }, (_, i) => `S-${i}`);
    for (const id of ids) await incoming(s, id);
    await until(
      s,
      async () => (await log(s, "slow")).filter((d) => d.status === "delivered").length === ids.length,
    );
    expect(peak).toBe(CAP);
    expect(new Set(to("slow").map((r) => bodyOf(r).data.id))).toEqual(new Set(ids));
    expect(to("slow").length).toBe(ids.length);
    // Another webhook of the session is not held up by this one's full slots.
    expect((await log(s, "other-slow")).every((d) => d.status === "delivered")).toBe(true);
  });

  it("redelivers at once beside an event that keeps failing, and logs each event on its own", async () => {
    const hook = endpoint("beside", ["message.received"]);
    answers.set(hook.url, (r) => new Response(null, { status: bodyOf(r).data.id === "R-BAD" ? 500 : 200 }));
    const s = await connected([hook]);
    await incoming(s, "R-OK");
    await until(s, async () => (await log(s, "beside"))[0]?.status === "delivered");
    await incoming(s, "R-BAD");
    await until(s, () => to("beside").length === 2);
    const [good, bad] = await log(s, "beside");
    const again = await sessionCall<DeliveryRecord>(s, "webhook.redeliver", {
      webhookId: "beside",
      deliveryId: good?.id,
    });
    expect(again).toMatchObject({ ok: true, data: { status: "pending", messageId: good?.messageId } });
    // R-BAD waits about 5 s for its retry; the redelivery does not wait with it.
    await until(s, () => to("beside").length === 3);
    const records = await log(s, "beside");
    expect(records.map((d) => [d.messageId, d.status, d.attempts])).toEqual([
      [good?.messageId, "delivered", 1],
      [bad?.messageId, "pending", 1],
      [good?.messageId, "delivered", 1],
    ]);
    expect(records[1]).toMatchObject({ statusCode: 500, error: "HTTP 500" });
    expect(records[1]?.nextAttemptAt).not.toBeNull();
    expect(to("beside").map((r) => r.headers.get("webhook-id"))).toEqual([
      good?.messageId,
      bad?.messageId,
      good?.messageId,
    ]);
  });

  it("sends an event that arrives while another webhook's attempt hangs at once, not after it", async () => {
    // One receiver that takes its time (up to the 15 s attempt timeout) must not hold back the
    // session's other webhooks: events arriving meanwhile are fanned out and sent straight away.
    const { s, answer } = await oneHangingOneFast("hanging", "prompt");
    await incoming(s, "H-1");
    // The real alarm is left to run (the test's alarm runs would overlap it, which the edge never does).
    await expect.poll(() => to("hanging").length).toBe(1);
    await incoming(s, "H-2");
    await expect.poll(() => to("prompt").map((r) => bodyOf(r).data.id)).toEqual(["H-1", "H-2"]);
    expect(to("hanging").length).toBe(2); // H-2 for the slow one too, beside H-1: a slot was free
    answer();
    await until(s, async () => (await log(s, "hanging")).every((d) => d.status === "delivered"));
  });

  it("redelivers at once while another webhook's attempt hangs", async () => {
    const { s, answer } = await oneHangingOneFast("stalled", "eager");
    await incoming(s, "RH-1");
    await expect.poll(async () => (await log(s, "eager"))[0]?.status).toBe("delivered");
    expect(to("stalled").length).toBe(1);
    const [first] = await log(s, "eager");
    await sessionCall(s, "webhook.redeliver", { webhookId: "eager", deliveryId: first?.id });
    await expect.poll(() => to("eager").length).toBe(2);
    answer();
    await until(s, async () => (await log(s, "stalled"))[0]?.status === "delivered");
  });

  it("keeps a slot for other events while contact.update floods in (pairing a phone)", async () => {
    const hook = endpoint("paired", ["contact.update", "message.received"]);
    let bulk = 0;
    let bulkPeak = 0;
    answers.set(hook.url, async (r) => {
      const isBulk = bodyOf(r).event === "contact.update";
      if (isBulk) bulkPeak = Math.max(bulkPeak, ++bulk);
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (isBulk) bulk--;
      return ok();
    });
    const s = await connected([hook]);
    const contacts = Array.from({ length: 30 }, (_, i) => ({
      jid: `62800000${1000 + i}@s.whatsapp.net`,
      name: `Contact ${i}`,
    }));
    await emit(s.link, 1, s.seq++, { kind: "contacts", contacts });
    await incoming(s, "AFTER-PAIRING");
    const isMessage = (r: Parameters<typeof bodyOf>[0]) => bodyOf(r).event === "message.received";
    await until(s, () => to("paired").some(isMessage));
    // Not behind the 30 contacts: it took the slot they may not use.
    expect(to("paired").findIndex(isMessage)).toBeLessThan(CAP + BULK_SLOTS);
    await until(s, async () => (await log(s, "paired")).every((d) => d.status === "delivered"));
    expect(to("paired").length).toBe(32); // 30 contacts, the message, and its sender's push name
    expect(bulkPeak).toBe(BULK_SLOTS);
  });
});

/** A session with two webhooks: `slow` answers only once `answer()` is called, `fast` at once. */
async function oneHangingOneFast(slow: string, fast: string) {
  const hanging = endpoint(slow, ["message.received"]);
  const prompt = endpoint(fast, ["message.received"]);
  let answer: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    answer = resolve;
  });
  answers.set(hanging.url, async () => {
    await held;
    return ok();
  });
  answers.set(prompt.url, ok);
  return { s: await connected([hanging, prompt]), answer };
}
