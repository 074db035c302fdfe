// The edge's record of a message this account sent (`GET /bridge/v1/sessions/:id/sent/:messageId`,
// workers/bridge-link.ts): what a bridge asks for when a recipient requests a resend (a retry receipt)
// of a message it no longer has in memory, after a restart or a failover. The real route, the real
// SessionDO and its stored messages; only the bridge is a fake.
import { describe, expect, it } from "vitest";
import { connectedSession } from "../../connected-session";
import { answerSend, emit, sendCommand } from "../../fake-bridge";
import { asKey, call } from "../../helpers";

const ME = "628100000001@s.whatsapp.net";
const PEER = "628100000002@s.whatsapp.net";

type Envelope<T> = { data: T };

/** Baileys' record of a sent message (`WebMessageInfo` as BufferJSON), as the bridge reports it. */
const rawRecord = (id: string, text: string) => ({
  key: { remoteJid: PEER, fromMe: true, id },
  message: { extendedTextMessage: { text } },
  messageTimestamp: 1_750_000_000,
  status: "PENDING",
});

describe("sent message records for resend requests", () => {
  it("the lease holder gets the stored raw record of a sent message; a received or unknown one is 404", async () => {
    const s = await connectedSession("Resends", ME);
    const auth = { Authorization: `Bearer ${await s.bridge.credential()}` };

    const sending = call<Envelope<{ id: string }>>("POST", `/api/messages/${s.slug}/${PEER}/send`, {
      body: { message: { text: "are you there?" } },
      headers: asKey(s.key),
    });
    const command = await sendCommand(s.link);
    const { messageId } = command.args as { messageId: string };
    const raw = rawRecord(messageId, "are you there?");
    answerSend(s.link, command, ME, { raw });
    const sent = await sending;
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.data.id).toBe(messageId);

    const record = await call("GET", `/bridge/v1/sessions/${s.id}/sent/${messageId}`, { headers: auth });
    expect(record.status).toBe(200);
    expect(record.body).toEqual({ raw });

    // Only own messages answer a resend: a received one is not this account's to send again.
    await emit(s.link, 1, 2, {
      kind: "message",
      live: true,
      message: {
        id: "INBOUND000001",
        chat: PEER,
        sender: PEER,
        fromMe: false,
        timestamp: Date.now(),
        content: { type: "text", text: "hi" },
        raw: {
          ...rawRecord("INBOUND000001", "hi"),
          key: { remoteJid: PEER, fromMe: false, id: "INBOUND000001" },
        },
      },
    });
    const received = await call("GET", `/bridge/v1/sessions/${s.id}/sent/INBOUND000001`, { headers: auth });
    expect(received.status).toBe(404);
    const unknown = await call("GET", `/bridge/v1/sessions/${s.id}/sent/3EB0NEVERSENT`, { headers: auth });
    expect(unknown.status).toBe(404);
  });
});
