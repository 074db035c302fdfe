// WhatsApp's limits on the account (issue 29, "send caps surfaced"): what the bridge reports is kept and
// shown on the session; while the reach-out timelock is active (or the new-chat cap is reached), a first
// message to someone who never wrote to the account is refused with the reason (403) and never reaches
// the bridge, while chats the contact started, groups and everything after the lock lifts still send.
import { describe, expect, it } from "vitest";
import { answerSend, type ConnectedSession, connectedSession } from "../../connected-session";
import { emit, sendCommand } from "../../fake-bridge";
import { asKey, call } from "../../helpers";

type Sent = { data: { id: string }; error?: string; message?: string };
type Limits = {
  reachoutTimelock: { active: boolean; until: number | null; enforcementType: string | null } | null;
  newChatCap: {
    status: string;
    used: number | null;
    total: number | null;
    cycleEndsAt: number | null;
  } | null;
};

const ME = "15550008001@s.whatsapp.net";
const KNOWN = "15550008002@s.whatsapp.net";
const STRANGER = "15550008003@s.whatsapp.net";
const GROUP = "120363000000000077@g.us";

const sendCount = (session: ConnectedSession) =>
  session.link.frames.filter(
    (f) => f.type === "command" && f.name === "wa" && (f.args as { op?: string }).op === "send",
  ).length;

function send(session: ConnectedSession, to: string) {
  return call<Sent>("POST", `/api/messages/${session.slug}/${encodeURIComponent(to)}/send`, {
    headers: asKey(session.key),
    body: { message: { text: "hello" } },
  });
}

async function sendAnswered(session: ConnectedSession, to: string, seen: Set<unknown>) {
  const response = send(session, to);
  answerSend(session.link, await sendCommand(session.link, seen), ME);
  return response;
}

async function limitsOf(session: ConnectedSession): Promise<Limits> {
  const detail = await call<{ data: { limits: Limits } }>("GET", `/api/sessions/${session.slug}`, {
    headers: asKey(session.key),
  });
  return detail.body.data.limits;
}

/** A session connected as ME that has heard from KNOWN once (event seq 2). */
async function sessionKnowingOne(name: string): Promise<ConnectedSession> {
  const session = await connectedSession(name, ME);
  await emit(session.link, 1, 2, {
    kind: "message",
    live: true,
    message: {
      id: "IN-KNOWN-1",
      chat: KNOWN,
      sender: KNOWN,
      fromMe: false,
      timestamp: Date.now(),
      content: { type: "text", text: "hi there" },
    },
  });
  return session;
}

describe("WhatsApp's limits on the account", () => {
  it("a reach-out timelock is shown, refuses first messages with the reason, and lifts", async () => {
    const session = await sessionKnowingOne("timelocked");
    expect(await limitsOf(session)).toEqual({ reachoutTimelock: null, newChatCap: null });
    const until = Date.now() + 3_600_000;
    await emit(session.link, 1, 3, {
      kind: "account.limits",
      limits: { reachoutTimelock: { active: true, until, enforcementType: "DEFAULT" } },
    });
    expect(await limitsOf(session)).toEqual({
      reachoutTimelock: { active: true, until, enforcementType: "DEFAULT" },
      newChatCap: null,
    });

    const refused = await send(session, STRANGER);
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toContain(
      `WhatsApp restricts this account from starting new chats until ${new Date(until).toISOString()} (reach-out timelock, DEFAULT)`,
    );
    expect(sendCount(session)).toBe(0);

    const seen = new Set<unknown>();
    expect((await sendAnswered(session, KNOWN, seen)).status).toBe(200);
    expect((await sendAnswered(session, GROUP, seen)).status).toBe(200);

    await emit(session.link, 1, 4, {
      kind: "account.limits",
      limits: { reachoutTimelock: { active: false, until: null, enforcementType: null } },
    });
    expect((await sendAnswered(session, STRANGER, seen)).status).toBe(200);
    expect(sendCount(session)).toBe(3);
  });

  it("a lock whose time has passed no longer refuses", async () => {
    const session = await sessionKnowingOne("lock-expired");
    await emit(session.link, 1, 3, {
      kind: "account.limits",
      limits: { reachoutTimelock: { active: true, until: Date.now() - 1_000, enforcementType: "DEFAULT" } },
    });
    expect((await sendAnswered(session, STRANGER, new Set())).status).toBe(200);
  });

  it("at the new-chat cap, first messages are refused until the cycle ends; warnings only show", async () => {
    const session = await sessionKnowingOne("capped");
    const cycleEndsAt = Date.now() + 86_400_000;
    await emit(session.link, 1, 3, {
      kind: "account.limits",
      limits: { newChatCap: { status: "SECOND_WARNING", used: 48, total: 50, cycleEndsAt } },
    });
    const seen = new Set<unknown>();
    expect((await sendAnswered(session, STRANGER, seen)).status).toBe(200);

    await emit(session.link, 1, 4, {
      kind: "account.limits",
      limits: { newChatCap: { status: "CAPPED", used: 50, total: 50, cycleEndsAt } },
    });
    expect((await limitsOf(session)).newChatCap).toEqual({
      status: "CAPPED",
      used: 50,
      total: 50,
      cycleEndsAt,
    });
    const refused = await send(session, "15550008009@s.whatsapp.net");
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toContain("WhatsApp's new-chat message cap is reached (50 of 50)");
    expect((await sendAnswered(session, KNOWN, seen)).status).toBe(200);
    expect(sendCount(session)).toBe(2);
  });
});
