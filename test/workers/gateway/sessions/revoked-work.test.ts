// Issue 25 (Lows): what an operator set up on a shared session (scheduled messages, auto-replies) stops
// when their access ends: at revocation (or lowering to viewer) it is cancelled / turned off with the
// reason, and every send re-checks its creator's access, so an access that ended by another path
// (here: the share row removed behind the API's back) stops it too. The owner's own work goes on.
// The real SessionDO behind the real API; the bridge is a fake that records every send it is asked for.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type ConnectedSession, connectedSession } from "../../connected-session";
import { answerSend, emit, sendCommand } from "../../fake-bridge";
import { asKey, call, createUser, generateKey } from "../../helpers";
import { eventually } from "../../patience";

type Envelope<T> = { status: boolean; message: string; data: T };
type Scheduled = { id: string; content: string; status: string; lastError: string | null; createdBy: string };
type Rule = {
  id: string;
  keyword: string;
  enabled: boolean;
  disabledReason: string | null;
  createdBy: string;
};
type Frame = Record<string, unknown> & { type: string };

const ME = "628100000777@s.whatsapp.net";
const PEER = "628120000042@s.whatsapp.net";

interface Setup {
  s: ConnectedSession;
  bob: { key: string; email: string; userId: string };
}

/** Alice's connected session, shared with Bob as an operator. */
async function shared(): Promise<Setup> {
  const s = await connectedSession("Shared line", ME);
  const user = await createUser("STAFF");
  const bob = { key: await generateKey(user), email: user.email, userId: user.userId };
  const share = await call("POST", `/api/sessions/${s.slug}/access`, {
    headers: asKey(s.key),
    body: { email: bob.email, role: "operator" },
  });
  expect(share.status).toBe(201);
  return { s, bob };
}

const later = () => new Date(Date.now() + 3_600_000).toISOString();

async function schedule(s: ConnectedSession, key: string, body: Record<string, unknown>): Promise<Scheduled> {
  const res = await call<Envelope<Scheduled>>("POST", `/api/scheduler/${s.slug}`, {
    headers: asKey(key),
    body: { jid: PEER, sendAt: later(), ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

async function scheduledList(s: ConnectedSession, tab: "pending" | "history"): Promise<Scheduled[]> {
  const res = await call<Envelope<Scheduled[]>>("GET", `/api/scheduler/${s.slug}?tab=${tab}`, {
    headers: asKey(s.key),
  });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Makes every pending row due now and runs the alarm, as if the wait had passed. */
async function fireNow(s: ConnectedSession): Promise<boolean> {
  const stub = env.SESSION.getByName(s.id);
  await runInDurableObject(stub, (_, state) => {
    state.storage.sql.exec("UPDATE scheduled SET next_at = 0 WHERE status = 'PENDING'");
  });
  return runDurableObjectAlarm(stub);
}

/** Every text the bridge was asked to send on this session so far. */
const sentTexts = (s: ConnectedSession) =>
  s.link.frames
    .filter((f: Frame) => f.type === "command" && (f.args as { op?: string } | undefined)?.op === "send")
    .map((f) => (f.args as { content: { text?: string } }).content.text);

async function rule(s: ConnectedSession, key: string, keyword: string, response: string): Promise<Rule> {
  const res = await call<Envelope<Rule>>("POST", `/api/autoreplies/${s.slug}`, {
    headers: asKey(key),
    body: { keyword, response, matchType: "CONTAINS" },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

async function rules(s: ConnectedSession): Promise<Map<string, Rule>> {
  const res = await call<Envelope<Rule[]>>("GET", `/api/autoreplies/${s.slug}`, { headers: asKey(s.key) });
  return new Map(res.body.data.map((r) => [r.id, r]));
}

let seq = 1;
let received = 0;
async function incoming(s: ConnectedSession, text: string): Promise<void> {
  await emit(s.link, 1, ++seq, {
    kind: "message",
    live: true,
    message: {
      id: `REVOKED${String(++received).padStart(6, "0")}`,
      chat: PEER,
      sender: PEER,
      fromMe: false,
      timestamp: Date.now(),
      content: { type: "text", text },
    },
  });
}

/** The next text the bot sends (answered as sent). */
async function botSays(s: ConnectedSession, seen: Set<unknown>): Promise<string | undefined> {
  const command = await sendCommand(s.link, seen);
  answerSend(s.link, command, ME);
  return (command.args as { content: { text?: string } }).content.text;
}

const revoke = (s: ConnectedSession, email: string) =>
  call("DELETE", `/api/sessions/${s.slug}/access`, { headers: asKey(s.key), body: { email } });

/** Ends Bob's access without the API: the revocation hook never runs, only the check at send time. */
const dropShareBehindTheApi = (s: ConnectedSession) =>
  env.DB.prepare("DELETE FROM session_access WHERE session_id = ?").bind(s.id).run();

describe("scheduled messages of an operator whose access ended", () => {
  it("are cancelled with the reason at revocation and never sent; the owner's still are", async () => {
    const { s, bob } = await shared();
    const once = await schedule(s, bob.key, { content: "from bob, once" });
    const daily = await schedule(s, bob.key, { content: "from bob, daily", cronExpression: "0 9 * * *" });
    const mine = await schedule(s, s.key, { content: "from alice" });
    expect(once.createdBy).toBe(bob.userId);
    expect(mine.createdBy).toBe(s.userId);

    const revoked = await revoke(s, bob.email);
    expect(revoked.status).toBe(200);
    expect((revoked.body as { message: string }).message).toContain("2 scheduled message(s) cancelled");

    const seen = new Set<unknown>();
    const firing = fireNow(s);
    expect(await botSays(s, seen)).toBe("from alice");
    await firing;
    expect(sentTexts(s)).toEqual(["from alice"]);
    expect(await scheduledList(s, "pending")).toEqual([]);
    const history = new Map((await scheduledList(s, "history")).map((row) => [row.id, row]));
    expect(history.get(mine.id)?.status).toBe("SENT");
    for (const id of [once.id, daily.id])
      expect(history.get(id)).toMatchObject({
        status: "CANCELLED",
        lastError: `cancelled: ${bob.email}'s access was revoked`,
      });
  });

  it("are cancelled when the operator is made a viewer", async () => {
    const { s, bob } = await shared();
    const theirs = await schedule(s, bob.key, { content: "from bob" });
    const lowered = await call("POST", `/api/sessions/${s.slug}/access`, {
      headers: asKey(s.key),
      body: { email: bob.email, role: "viewer" },
    });
    expect(lowered.status).toBe(200);
    await fireNow(s);
    expect(sentTexts(s)).toEqual([]);
    const [row] = await scheduledList(s, "history");
    expect(row).toMatchObject({
      id: theirs.id,
      status: "CANCELLED",
      lastError: `cancelled: ${bob.email} was made a viewer of this session`,
    });
  });

  it("are not sent when the access ended by another path: the send re-checks it", async () => {
    const { s, bob } = await shared();
    const theirs = await schedule(s, bob.key, { content: "from bob" });
    await dropShareBehindTheApi(s);
    await fireNow(s);
    expect(sentTexts(s)).toEqual([]);
    const [row] = await scheduledList(s, "history");
    expect(row).toMatchObject({ id: theirs.id, status: "CANCELLED" });
    expect(row?.lastError).toContain("no longer has operator access");
  });
});

describe("auto-replies of an operator whose access ended", () => {
  it("are turned off with the reason at revocation; the owner's still answer, and the owner may turn them on", async () => {
    const { s, bob } = await shared();
    const seen = new Set<unknown>();
    seq = 1;
    const theirs = await rule(s, bob.key, "price", "Bob's price list");
    await rule(s, s.key, "hours", "9 to 5");
    await incoming(s, "what's the price?");
    expect(await botSays(s, seen)).toBe("Bob's price list");

    expect((await revoke(s, bob.email)).status).toBe(200);
    await incoming(s, "price please");
    await incoming(s, "opening hours?");
    expect(await botSays(s, seen)).toBe("9 to 5");
    expect(sentTexts(s)).toEqual(["Bob's price list", "9 to 5"]);
    expect((await rules(s)).get(theirs.id)).toMatchObject({
      enabled: false,
      disabledReason: `cancelled: ${bob.email}'s access was revoked`,
      createdBy: bob.userId,
    });

    // The owner takes the rule over by turning it on: it answers on the owner's access from now on.
    const adopted = await call<Envelope<Rule>>("PUT", `/api/autoreplies/${s.slug}/${theirs.id}`, {
      headers: asKey(s.key),
      body: { enabled: true },
    });
    expect(adopted.body.data).toMatchObject({ enabled: true, disabledReason: null, createdBy: s.userId });
    await incoming(s, "price?");
    expect(await botSays(s, seen)).toBe("Bob's price list");
  });

  it("do not answer when the access ended by another path; the next matching rule answers instead", async () => {
    const { s, bob } = await shared();
    const seen = new Set<unknown>();
    seq = 1;
    const theirs = await rule(s, bob.key, "hello", "Bob says hi");
    await rule(s, s.key, "hello", "Alice says hi");
    await dropShareBehindTheApi(s);
    await incoming(s, "hello there");
    expect(await botSays(s, seen)).toBe("Alice says hi");
    expect(sentTexts(s)).toEqual(["Alice says hi"]);
    const after = (await rules(s)).get(theirs.id);
    expect(after?.enabled).toBe(false);
    expect(after?.disabledReason).toContain("no longer has operator access");
  });
});

type Broadcast = { id: string; status: string; sent: number; cancelReason: string | null; createdBy: string };

const person = (n: number) => `62813${String(n).padStart(7, "0")}@s.whatsapp.net`;

/** Bob's broadcast to three people; its first message goes out at once (answered as sent). */
async function bobsBroadcast(s: ConnectedSession, bob: Setup["bob"], seen: Set<unknown>): Promise<string> {
  const started = await call<Envelope<{ broadcastId: string }>>("POST", `/api/messages/${s.slug}/broadcast`, {
    headers: asKey(bob.key),
    body: { recipients: [person(1), person(2), person(3)], message: "Bob's offer" },
  });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  expect(await botSays(s, seen)).toBe("Bob's offer");
  const id = started.body.data.broadcastId;
  // The answer reaches the session's object after botSays returns; until it is recorded (sent 1, the
  // next step's time set in the same step), a test that moves the next step would be overwritten.
  await eventually(async () => (await broadcast(s, id)).sent === 1);
  return id;
}

/** Makes the broadcast's next step due now and runs the alarm, as if the gap had passed. */
async function stepNow(s: ConnectedSession): Promise<void> {
  const stub = env.SESSION.getByName(s.id);
  await runInDurableObject(stub, (_, state) => {
    state.storage.sql.exec("UPDATE broadcasts SET next_at = 0, lease_until = NULL WHERE status = 'running'");
  });
  await runDurableObjectAlarm(stub);
}

async function broadcast(s: ConnectedSession, id: string): Promise<Broadcast> {
  const res = await call<Envelope<Broadcast>>("GET", `/api/messages/${s.slug}/broadcast/history/${id}`, {
    headers: asKey(s.key),
  });
  expect(res.status).toBe(200);
  return res.body.data;
}

describe("broadcasts of an operator whose access ended", () => {
  it("are cancelled with the reason at revocation: nothing more is sent", async () => {
    const { s, bob } = await shared();
    const seen = new Set<unknown>();
    const id = await bobsBroadcast(s, bob, seen);
    expect((await revoke(s, bob.email)).status).toBe(200);
    await stepNow(s);
    expect(sentTexts(s)).toEqual(["Bob's offer"]);
    expect(await broadcast(s, id)).toMatchObject({
      status: "cancelled",
      sent: 1,
      createdBy: bob.userId,
      cancelReason: `cancelled: ${bob.email}'s access was revoked`,
    });
  });

  it("stop at the next send when the access ended by another path", async () => {
    const { s, bob } = await shared();
    const seen = new Set<unknown>();
    const id = await bobsBroadcast(s, bob, seen);
    await dropShareBehindTheApi(s);
    await stepNow(s);
    expect(sentTexts(s)).toEqual(["Bob's offer"]);
    const after = await broadcast(s, id);
    expect(after).toMatchObject({ status: "cancelled", sent: 1 });
    expect(after.cancelReason).toContain("no longer has operator access");
  });
});
