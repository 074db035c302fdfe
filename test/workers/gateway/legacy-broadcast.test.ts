// The deprecated `POST /api/messages/broadcast`: its `delay` is waited between recipients on top of
// the random 10–20 s anti-ban gap. Asserted on the stored schedule (the job's `nextAt` after a send),
// never on the wall clock.
import { describe, expect, it } from "vitest";
import { answerSend, type ConnectedSession, connectedSession } from "../connected-session";
import type { Link } from "../fake-bridge";
import { asKey, call } from "../helpers";
import { eventually } from "../patience";

type Envelope<T> = { status: boolean; message: string; data: T; error?: string };
type Frame = Record<string, unknown> & { type: string };
type Detail = {
  sent: number;
  nextAt: string | null;
  recipients: Array<{ jid: string; status: string; sentAt: string | null }>;
};

const ME = "628111000222@s.whatsapp.net";
const person = (n: number) => `62813${String(n).padStart(7, "0")}@s.whatsapp.net`;

async function legacyBroadcast(s: ConnectedSession, body: Record<string, unknown>) {
  return call<Envelope<{ broadcastId: string; total: number }>>("POST", "/api/messages/broadcast", {
    body: { sessionId: s.slug, recipients: [person(1), person(2)], message: "Hello all", ...body },
    headers: asKey(s.key),
  });
}

/** Answers the session's first `send` as the bridge would: sent. */
async function answerFirstSend(link: Link): Promise<void> {
  const frame: Frame = await link.next(
    (f) => f.type === "command" && f.name === "wa" && (f.args as { op?: string }).op === "send",
  );
  answerSend(link, frame, ME);
}

/** The wait the job scheduled after its first send: next due time minus the first send's time. */
async function scheduledGap(s: ConnectedSession, broadcastId: string): Promise<number> {
  let detail: Detail | undefined;
  await eventually(async () => {
    const res = await call<Envelope<Detail>>(
      "GET",
      `/api/messages/${s.slug}/broadcast/history/${broadcastId}`,
      { headers: asKey(s.key) },
    );
    detail = res.body.data;
    return detail.sent === 1;
  });
  if (!detail) throw new Error("no broadcast detail");
  const sentAt = Date.parse(detail.recipients[0]?.sentAt ?? "");
  return Date.parse(detail.nextAt ?? "") - sentAt;
}

describe("POST /api/messages/broadcast (deprecated): delay", () => {
  it("waits `delay` on top of the random 10–20 s gap between recipients", async () => {
    const s = await connectedSession("Legacy broadcaster", ME);
    const res = await legacyBroadcast(s, { delay: 45_000 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await answerFirstSend(s.link);
    const gap = await scheduledGap(s, res.body.data.broadcastId);
    expect(gap).toBeGreaterThanOrEqual(45_000 + 10_000);
    expect(gap).toBeLessThanOrEqual(45_000 + 20_000);
  });

  it("uses the documented default of 2000 ms when `delay` is omitted", async () => {
    const s = await connectedSession("Legacy broadcaster default", ME);
    const res = await legacyBroadcast(s, {});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await answerFirstSend(s.link);
    const gap = await scheduledGap(s, res.body.data.broadcastId);
    expect(gap).toBeGreaterThanOrEqual(2_000 + 10_000);
    expect(gap).toBeLessThanOrEqual(2_000 + 20_000);
  });

  it("refuses a delay outside 500–60000 ms with a 400 naming the field, and starts nothing", async () => {
    const s = await connectedSession("Legacy broadcaster bounds", ME);
    for (const delay of [499, 60_001]) {
      const res = await legacyBroadcast(s, { delay });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain("delay");
    }
    const history = await call<Envelope<unknown[]>>("GET", `/api/messages/${s.slug}/broadcast/history`, {
      headers: asKey(s.key),
    });
    expect(history.body.data).toEqual([]);
  });
});
