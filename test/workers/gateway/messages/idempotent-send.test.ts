// Idempotency-Key on the send routes: a retry with the same key on the same session is the same
// WhatsApp message — sent once, answered with that message again, even when the first answer was lost
// after WhatsApp took the message (the bridge reported it, then its result never came back).
import { describe, expect, it } from "vitest";
import { answerSend, type ConnectedSession, connectedSession } from "../../connected-session";
import { emit, sendCommand } from "../../fake-bridge";
import { asKey, call } from "../../helpers";

type Sent = { data: { id: string } };
const ME = "15550001111@s.whatsapp.net";
const TO = "15550002222@s.whatsapp.net";

const sendCommands = (session: ConnectedSession) =>
  session.link.frames.filter(
    (f) => f.type === "command" && f.name === "wa" && (f.args as { op?: string }).op === "send",
  );

function send(session: ConnectedSession, key: string | null, text: string) {
  return call<Sent & { error?: string }>(
    "POST",
    `/api/messages/${session.slug}/${encodeURIComponent(TO)}/send`,
    {
      headers: { ...asKey(session.key), ...(key === null ? {} : { "Idempotency-Key": key }) },
      body: { message: { text } },
    },
  );
}

/** Sends and answers the bridge's command as a bridge that sent it; resolves with the response. */
async function sendAnswered(session: ConnectedSession, key: string | null, text: string, seen: Set<unknown>) {
  const response = send(session, key, text);
  answerSend(session.link, await sendCommand(session.link, seen), ME);
  return response;
}

describe("Idempotency-Key on sends", () => {
  it("the same key sends one message and answers it again; another key, another message", async () => {
    const session = await connectedSession("idem", ME);
    const seen = new Set<unknown>();
    const first = await sendAnswered(session, '"order-7"', "Your order shipped", seen);
    expect(first.status, JSON.stringify(first.body)).toBe(200);

    const again = await send(session, '"order-7"', "Your order shipped");
    expect(again.status).toBe(200);
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(sendCommands(session)).toHaveLength(1);

    const other = await sendAnswered(session, "order-8", "Your order shipped", seen);
    expect(other.status).toBe(200);
    expect(other.body.data.id).not.toBe(first.body.data.id);
    expect(first.body.data.id).toMatch(/^3EB0[0-9A-F]{20}$/);
    expect(sendCommands(session)).toHaveLength(2);
  });

  it("a retry after a lost answer is the message WhatsApp already took, not a second one", async () => {
    const session = await connectedSession("idem-lost", ME);
    const seen = new Set<unknown>();
    const lost = send(session, "notice-1", "Approve the hire?");
    const command = await sendCommand(session.link, seen);
    const args = command.args as { messageId: string; to: string };
    // WhatsApp took it (the bridge reports its own message), then the bridge's answer never arrived.
    await emit(session.link, 1, 2, {
      kind: "message",
      live: false,
      message: {
        id: args.messageId,
        chat: args.to,
        sender: ME,
        fromMe: true,
        timestamp: Date.now(),
        content: { type: "text", text: "Approve the hire?" },
      },
    });
    answerSend(session.link, command, ME, { status: 503, error: "The bridge did not answer in time" });
    expect((await lost).status).toBe(503);

    const retried = await send(session, "notice-1", "Approve the hire?");
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body.data.id).toBe(args.messageId);
    expect(sendCommands(session)).toHaveLength(1);
  });

  it("keys are per session, and a malformed key is a 400 that sends nothing", async () => {
    const one = await connectedSession("idem-a", ME);
    const two = await connectedSession("idem-b", ME);
    const a = await sendAnswered(one, "same", "hi", new Set());
    const b = await sendAnswered(two, "same", "hi", new Set());
    expect(a.body.data.id).not.toBe(b.body.data.id);

    const bad = await send(one, "has space", "hi");
    expect(bad.status).toBe(400);
    const long = await send(one, "k".repeat(256), "hi");
    expect(long.status).toBe(400);
    expect(sendCommands(one)).toHaveLength(1);
  });
});
