// Bot commands and auto-replies in a chat WhatsApp addresses only by LID (`<digits>@lid`, no phone
// number in the message): the access lists may name the person by LID, or by phone number once the
// session has learnt the pair (a `contacts` event with both, the contacts table). The real SessionDO
// behind the real API; the bridge is a fake that records what the bot sends.
import { describe, expect, it } from "vitest";
import { type ConnectedSession, connectedSession } from "../../../connected-session";
import { answerSend, emit, sendCommand } from "../../../fake-bridge";
import { asKey, call } from "../../../helpers";

const ME = "628100000001@s.whatsapp.net";
const NUMBER = "4915550009876@s.whatsapp.net";
const LID = "201234567890123@lid";

type Sent = { to: string; content: { type: string; text?: string } };

async function configure(s: ConnectedSession, body: Record<string, unknown>) {
  const res = await call("POST", `/api/sessions/${s.slug}/bot-config`, { body, headers: asKey(s.key) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

let seq = 2;
let messages = 0;
/** The LID-only person writes `text` in their direct chat. */
async function fromLid(s: ConnectedSession, text: string): Promise<void> {
  const id = `LIDMSG${String(++messages).padStart(6, "0")}`;
  await emit(s.link, 1, seq++, {
    kind: "message",
    live: true,
    message: {
      id,
      chat: LID,
      sender: LID,
      fromMe: false,
      timestamp: Date.now(),
      content: { type: "text", text },
    },
  });
}

const answered = new Set<unknown>();
/** What the bot sent next (answered as sent, so the bot goes on). */
async function botSent(s: ConnectedSession): Promise<Sent> {
  const command = await sendCommand(s.link, answered);
  answerSend(s.link, command, ME);
  return command.args as Sent;
}

describe("the bot in a chat known only by LID", () => {
  it("answers commands and auto-replies when the lists name the person by LID, or by number once the pair is known", async () => {
    const s = await connectedSession("LID bot", ME);
    seq = 2;
    const rule = await call("POST", `/api/autoreplies/${s.slug}`, {
      body: { keyword: "opening hours", matchType: "CONTAINS", response: "9 to 5" },
      headers: asKey(s.key),
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(200);

    // By LID: the lists accept `<digits>@lid` and the bot answers in the @lid chat.
    await configure(s, {
      botMode: "SPECIFIC",
      botAllowedJids: [LID],
      autoReplyMode: "SPECIFIC",
      autoReplyAllowedJids: [LID],
    });
    await fromLid(s, "#ping");
    expect(await botSent(s)).toMatchObject({ to: LID, content: { type: "text", text: "Pong! 🏓" } });
    await fromLid(s, "what are your opening hours?");
    expect(await botSent(s)).toMatchObject({ to: LID, content: { type: "text", text: "9 to 5" } });

    // By phone number: refused while the session cannot tie the LID to it (the command is not run,
    // so the text goes on to the auto-replies, where the number is not listed either)…
    await configure(s, {
      botAllowedJids: [NUMBER],
      autoReplyMode: "BLACKLIST",
      autoReplyAllowedJids: [],
      autoReplyBlockedJids: [NUMBER],
    });
    await fromLid(s, "#ping opening hours");
    expect(await botSent(s)).toMatchObject({ to: LID, content: { text: "9 to 5" } });

    // …honoured once WhatsApp told it the pair (the contacts table is the LID ↔ number store).
    await emit(s.link, 1, seq++, { kind: "contacts", contacts: [{ jid: NUMBER, lid: LID }] });
    await fromLid(s, "#ping opening hours");
    expect(await botSent(s)).toMatchObject({ to: LID, content: { text: "Pong! 🏓" } });
    // The blocked number is the same person: its LID gets no auto-reply now.
    await fromLid(s, "opening hours?");
    await fromLid(s, "#ping");
    expect(await botSent(s)).toMatchObject({ to: LID, content: { text: "Pong! 🏓" } });
  });
});
