// A company whose owner linked a connected session (held by a fake bridge) as its WhatsApp line, and
// what the fake bridge was asked to send on it. Every `wa` command is answered as a bridge would.
import { afterEach, expect } from "vitest";
import { type ConnectedSession, connect } from "../connected-session";
import {
  type BoardUser,
  boardUser,
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  seedCompany,
} from "../control/helpers";
import { answerSend, emit } from "../fake-bridge";
import { call } from "../helpers";

export interface Line {
  owner: BoardUser;
  company: SeededCompany;
  agent: SeededAgent;
  session: ConnectedSession;
  me: string;
  /** Messages the fake bridge was asked to send, to `jid` (or all). */
  sent(jid?: string): Array<{ to: string; content: Record<string, unknown> }>;
  /**
   * `jid` writes to the line (an inbound message); `extra` overrides the message's fields (its `id`,
   * a `quotedId`, another `content` such as a reaction). Answers the message's id.
   */
  receiveFrom(jid: string, text: string, extra?: Record<string, unknown>): Promise<string>;
  /** `jid` votes `options` in the poll `pollId`, as the bridge reports a decrypted vote; answers the vote's id. */
  voteFrom(jid: string, pollId: string, options: string[], id?: string): Promise<string>;
  /**
   * The next send reaches WhatsApp (the bridge reports the message) but its answer is lost (the
   * command fails with 503), as when a bridge dies between the two.
   */
  loseNextSendAnswer(): void;
  /** The bridge learned that `lid` is the person with the number `jid` (Baileys' LID mapping). */
  learnLid(jid: string, lid: string): Promise<void>;
}

const responders: ReturnType<typeof setInterval>[] = [];
afterEach(() => {
  for (const timer of responders.splice(0)) clearInterval(timer);
});

let phone = 628_200_000_000;
export const personJid = () => `${++phone}@s.whatsapp.net`;

export async function linkedLine(): Promise<Line> {
  const owner = await boardUser();
  const company = await seedCompany(owner);
  const agent = await seedAgent(company.id);
  const created = await call<{ data: { id: string; sessionId: string } }>("POST", "/api/sessions", {
    body: { name: "Line" },
    headers: owner.headers,
  });
  expect(created.status).toBe(200);
  const me = personJid();
  const session = await connect(
    { key: owner.key, userId: owner.userId, id: created.body.data.id, slug: created.body.data.sessionId },
    me,
  );
  const linked = await call("PUT", `/api/companies/${company.id}/line`, {
    body: { sessionId: session.slug },
    headers: owner.headers,
  });
  expect(linked.status, JSON.stringify(linked.body)).toBe(200);

  let seq = 1;
  let losing = 0;
  /** The message as WhatsApp took it, reported by the bridge; then the command's answer is a failure. */
  const reportThenFail = async (frame: (typeof session.link.frames)[number]) => {
    const args = frame.args as { to: string; messageId: string; content: Record<string, unknown> };
    const message = { id: args.messageId, chat: args.to, sender: me, fromMe: true, timestamp: Date.now() };
    await emit(session.link, 1, ++seq, {
      kind: "message",
      live: false,
      message: { ...message, content: args.content },
    });
    session.link.send({
      type: "result",
      epoch: 1,
      id: frame.id,
      ok: false,
      status: 503,
      error: "The bridge did not answer in time",
    });
  };
  const answered = new Set<unknown>();
  responders.push(
    setInterval(() => {
      for (const frame of session.link.frames) {
        if (frame.type !== "command" || answered.has(frame.id)) continue;
        answered.add(frame.id);
        // A bridge answers every command (stop, logout too), not only WhatsApp operations.
        const isSend = frame.name === "wa" && (frame.args as { op?: string }).op === "send";
        if (isSend && losing > 0) {
          losing--;
          void reportThenFail(frame);
        } else if (isSend) answerSend(session.link, frame, me);
        else session.link.send({ type: "result", epoch: 1, id: frame.id, ok: true, data: null });
      }
    }, 10),
  );
  return {
    owner,
    company,
    agent,
    session,
    me,
    sent: (jid) =>
      session.link.frames
        .filter((f) => f.type === "command" && f.name === "wa" && (f.args as { op?: string }).op === "send")
        .map((f) => f.args as { to: string; content: Record<string, unknown> })
        .filter((args) => jid === undefined || args.to === jid),
    receiveFrom: async (jid, text, extra = {}) => {
      const message = {
        id: `IN${crypto.randomUUID().replace(/-/g, "").slice(0, 16).toUpperCase()}`,
        chat: jid,
        sender: jid,
        fromMe: false,
        timestamp: Date.now(),
        content: { type: "text", text },
        ...extra,
      };
      await emit(session.link, 1, ++seq, { kind: "message", live: true, message });
      return message.id;
    },
    voteFrom: async (jid, pollId, options, id) => {
      const vote = {
        id: id ?? `VOTE${crypto.randomUUID().replace(/-/g, "").slice(0, 12).toUpperCase()}`,
        chat: jid,
        pollId,
        voter: jid,
        voterPhone: jid.split("@")[0] ?? null,
        selectedOptions: options,
        timestamp: Date.now(),
      };
      await emit(session.link, 1, ++seq, { kind: "poll.vote", vote });
      return vote.id;
    },
    loseNextSendAnswer: () => {
      losing++;
    },
    learnLid: async (jid, lid) => {
      await emit(session.link, 1, ++seq, { kind: "contacts", contacts: [{ jid, lid }] });
    },
  };
}
