// Send pacing per session (issue 29, ban-risk controls): `sendGapMs` keeps at least that long between two
// messages the session sends, and `typingMs` shows "typing…" in the chat (a `presence composing`
// operation) before each; both validated, both off by default.
import { describe, expect, it } from "vitest";
import { answerSend, type ConnectedSession, connectedSession } from "../../connected-session";
import type { Link } from "../../fake-bridge";
import { asKey, call } from "../../helpers";

type Frame = Record<string, unknown> & { type: string };
const ME = "15550009001@s.whatsapp.net";
const TO = "15550009002@s.whatsapp.net";

const waOps = (link: Link, op: string) =>
  link.frames.filter((f) => f.type === "command" && f.name === "wa" && (f.args as { op?: string }).op === op);

function settings(session: ConnectedSession, config: Record<string, unknown>) {
  return call("PATCH", `/api/sessions/${session.slug}/settings`, {
    headers: asKey(session.key),
    body: { config },
  });
}

function send(session: ConnectedSession, text: string) {
  return call<{ data: { id: string } }>(
    "POST",
    `/api/messages/${session.slug}/${encodeURIComponent(TO)}/send`,
    {
      headers: asKey(session.key),
      body: { message: { text } },
    },
  );
}

/** Answers every presence and send command as a bridge does, recording when each send arrived. */
function answerAll(link: Link, arrivals: Map<unknown, number>): () => void {
  const timer = setInterval(() => {
    for (const frame of link.frames) {
      if (frame.type !== "command" || arrivals.has(frame.id)) continue;
      arrivals.set(frame.id, Date.now());
      const op = (frame.args as { op?: string }).op;
      if (op === "send") answerSend(link, frame, ME);
      else link.send({ type: "result", epoch: 1, id: frame.id, ok: true, data: null });
    }
  }, 5);
  return () => clearInterval(timer);
}

describe("send pacing", () => {
  it("is off by default and validated", async () => {
    const session = await connectedSession("unpaced", ME);
    for (const config of [
      { sendGapMs: -1 },
      { sendGapMs: 60_001 },
      { typingMs: 10_001 },
      { sendGapMs: 1.5 },
    ]) {
      expect((await settings(session, config)).status).toBe(400);
    }
    const arrivals = new Map<unknown, number>();
    const stop = answerAll(session.link, arrivals);
    expect((await send(session, "one")).status).toBe(200);
    stop();
    expect(waOps(session.link, "presence")).toEqual([]);
  });

  it("typing is shown in the chat before each message; sends keep the gap between them", async () => {
    const session = await connectedSession("paced", ME);
    expect((await settings(session, { sendGapMs: 1_000, typingMs: 300 })).status).toBe(200);
    const arrivals = new Map<unknown, number>();
    const stop = answerAll(session.link, arrivals);
    const [first, second] = await Promise.all([send(session, "first"), send(session, "second")]);
    stop();
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    const commands = session.link.frames.filter((f: Frame) => f.type === "command" && f.name === "wa");
    expect(commands.map((f) => (f.args as { op: string }).op)).toEqual([
      "presence",
      "send",
      "presence",
      "send",
    ]);
    expect(commands[0]?.args).toMatchObject({ op: "presence", chat: TO, presence: "composing" });
    const [sendA, sendB] = waOps(session.link, "send").map((f) => arrivals.get(f.id) ?? 0);
    expect((sendB ?? 0) - (sendA ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it("the gap counts from when the previous send was done, not from when it started", async () => {
    const session = await connectedSession("paced-slow", ME);
    expect((await settings(session, { sendGapMs: 1_000 })).status).toBe(200);
    // The first send takes a while on the bridge (a new chat: device lists and keys first).
    const arrivals = new Map<unknown, number>();
    const answered = new Map<unknown, number>();
    const timer = setInterval(() => {
      for (const frame of waOps(session.link, "send")) {
        if (arrivals.has(frame.id)) continue;
        arrivals.set(frame.id, Date.now());
        const delay = arrivals.size === 1 ? 600 : 0;
        setTimeout(() => {
          answered.set(frame.id, Date.now());
          answerSend(session.link, frame, ME);
        }, delay);
      }
    }, 5);
    const [first, second] = await Promise.all([send(session, "slow"), send(session, "next")]);
    clearInterval(timer);
    expect([first.status, second.status]).toEqual([200, 200]);
    const [sendA, sendB] = waOps(session.link, "send").map((f) => f.id);
    expect((arrivals.get(sendB) ?? 0) - (answered.get(sendA) ?? 0)).toBeGreaterThanOrEqual(950);
  });
});
