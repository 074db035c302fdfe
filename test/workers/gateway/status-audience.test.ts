// A status post without `mentions` is shown to the session's phone-number contacts (WhatsApp needs the
// audience listed: an empty one reaches nobody); with none known, a 409 says so and nothing is sent.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { answerSend, connectedSession } from "../connected-session";
import { emit, type Link } from "../fake-bridge";
import { asKey, call } from "../helpers";

type Frame = Record<string, unknown> & { type: string };
type Envelope<T> = { status: boolean; message: string; data: T; error?: string };

const ME = "628111000333@s.whatsapp.net";
const ANA = "628130000001@s.whatsapp.net";
const BEN = "628130000002@s.whatsapp.net";
const CAL = "628130000003@s.whatsapp.net";

const isStatusSend = (f: Frame) =>
  f.type === "command" && f.name === "wa" && (f.args as { to?: string }).to === "status@broadcast";

/** Answers the status send as the bridge does, and returns the audience it was asked to show it to. */
async function answeredStatusSend(link: Link): Promise<string[] | undefined> {
  const frame = await link.next(isStatusSend);
  answerSend(link, frame, ME);
  return (frame.args as { statusJidList?: string[] }).statusJidList;
}

describe("POST /api/status/{sessionId}/update audience", () => {
  it("without mentions, shows the post to the session's phone-number contacts (not blocked, not groups or LIDs)", async () => {
    const s = await connectedSession("Status audience", ME);
    await emit(s.link, 1, 2, {
      kind: "contacts",
      contacts: [
        { jid: ANA, lid: "201000000001@lid", notify: "Ana" },
        { jid: BEN, name: "Ben" },
        { jid: CAL, notify: "Cal" },
        { jid: "201000000009@lid", notify: "Only a LID" },
      ],
    });
    // Cal is blocked (as `POST /contacts/{sid}/{jid}/block` records it).
    await runInDurableObject(env.SESSION.getByName(s.id), (_, state) => {
      state.storage.sql.exec("UPDATE contacts SET blocked = 1 WHERE jid = ?", CAL);
    });
    const posting = call<Envelope<{ remoteJid: string }>>("POST", `/api/status/${s.slug}/update`, {
      body: { content: "Open till late" },
      headers: asKey(s.key),
    });
    const audience = await answeredStatusSend(s.link);
    const res = await posting;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.remoteJid).toBe("status@broadcast");
    expect([...(audience ?? [])].sort()).toEqual([ANA, BEN]);
  });

  it("with mentions, shows it to exactly those", async () => {
    const s = await connectedSession("Status mentions", ME);
    await emit(s.link, 1, 2, { kind: "contacts", contacts: [{ jid: ANA, notify: "Ana" }] });
    const posting = call("POST", `/api/status/${s.slug}/update`, {
      body: { content: "Just Ben", mentions: [BEN] },
      headers: asKey(s.key),
    });
    expect(await answeredStatusSend(s.link)).toEqual([BEN]);
    expect((await posting).status).toBe(200);
  });

  it("with no mentions and no contacts, answers 409 naming the cause and sends nothing", async () => {
    const s = await connectedSession("Status nobody", ME);
    const res = await call<Envelope<null>>("POST", `/api/status/${s.slug}/update`, {
      body: { content: "Anyone?" },
      headers: asKey(s.key),
    });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/no phone-number contacts.*mentions/i);
    const messages = await call<Envelope<unknown[]>>("GET", `/api/chat/${s.slug}/status%40broadcast`, {
      headers: asKey(s.key),
    });
    expect(messages.body.data ?? []).toEqual([]);
  });
});
