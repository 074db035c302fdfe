// Group administration through the whole stack (REST API → Worker → SessionDO → bridge process with
// real Baileys → the protocol-level fake WhatsApp) and back: the account creates a group, adds and
// promotes a member; that member, now an admin, removes someone and renames the group from their
// phone (a `w:gp2` notification). The webhooks `group.upsert`, `group.participant` and `group.update`
// reach a real HTTP receiver, each once, and the stored group is what the fake WhatsApp holds. Then
// the group's detail, settings, description, invite link (get, revoke) and leaving, through the API.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import type { FakeWhatsApp } from "../fake-whatsapp/server.ts";
import type { ApiClient } from "../support/api.ts";
import { eventually } from "../support/api.ts";
import {
  type FakeWhatsAppStack,
  pairByQr,
  startFakeWhatsAppStack,
  webhookData,
} from "../support/fake-whatsapp-stack.ts";
import { type Envelope, jidPath } from "../support/messaging.ts";
import { createWebhook } from "../support/receiver.ts";

let world: FakeWhatsAppStack;
let whatsapp: FakeWhatsApp;
let api: ApiClient;

beforeAll(async () => {
  world = await startFakeWhatsAppStack();
  ({ whatsapp, api } = world);
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

const SID = `fakegrp-${Math.random().toString(36).slice(2, 8)}`;
const PHONE = "4915550008100";
const ME = `${PHONE}@s.whatsapp.net`;

type Participant = { id: string; admin: "admin" | "superadmin" | null };
type Group = { jid: string; subject: string; owner: string | null; participants: Participant[] };
type ParticipantWebhook = { jid: string; action: string; participants: string[]; author: string | null };

const byId = (participants: Participant[]) => [...participants].sort((a, b) => a.id.localeCompare(b.id));

async function webhook<T>(event: string, what: string, match: (data: T) => boolean): Promise<T> {
  return eventually(
    async () => ((await webhookData(world.receiver, SID, event)) as T[]).find(match),
    30_000,
    what,
  );
}

describe("group administration on real Baileys against the fake WhatsApp, through the API", () => {
  it("create, add, promote; a member who is admin removes someone and renames it: webhooks delivered, stored group as WhatsApp has it", async () => {
    expect((await api.call("POST", "/api/sessions", { name: SID, sessionId: SID })).status).toBe(200);
    await createWebhook(api, SID, { name: "all", url: world.receiver.url(`/${SID}`), events: ["*"] });
    await pairByQr(api, whatsapp, SID, PHONE);
    const alice = new FakeContact(whatsapp, "4915550008201", "Alice");
    const bob = new FakeContact(whatsapp, "4915550008202", "Bob");
    const carol = new FakeContact(whatsapp, "4915550008203", "Carol");

    const created = await api.call<Envelope<{ group: Group }>>("POST", `/api/groups/${SID}/create`, {
      subject: "Board",
      participants: [alice.jid, bob.jid],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { jid } = created.body.data.group;
    expect(created.body.data.group).toMatchObject({ subject: "Board", owner: ME });
    const upsert = await webhook<Group>("group.upsert", "group.upsert", (data) => data.jid === jid);
    expect(byId(upsert.participants)).toEqual(
      byId([
        { id: ME, admin: "superadmin" },
        { id: alice.jid, admin: null },
        { id: bob.jid, admin: null },
      ]),
    );

    const members = (action: string, participants: string[]) =>
      api.call<Envelope<{ result: Array<{ jid: string; status: string }> }>>(
        "PUT",
        `/api/groups/${SID}/${jidPath(jid)}/members`,
        { action, participants },
      );
    const added = await members("add", [carol.jid, alice.jid]);
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body.data.result).toEqual([
      { jid: carol.jid, status: "200" },
      { jid: alice.jid, status: "409" },
    ]);
    expect((await members("promote", [alice.jid])).body.data.result).toEqual([
      { jid: alice.jid, status: "200" },
    ]);
    const participant = (action: string, who: string) =>
      webhook<ParticipantWebhook>(
        "group.participant",
        `group.participant ${action} ${who}`,
        (data) => data.jid === jid && data.action === action && data.participants.includes(who),
      );
    expect(await participant("add", carol.jid)).toMatchObject({ participants: [carol.jid], author: ME });
    expect(await participant("promote", alice.jid)).toMatchObject({ author: ME });

    // Alice, an admin now, acts from her phone: WhatsApp tells the account's devices (w:gp2).
    const group = whatsapp.messaging.groups.get(jid);
    if (!group) throw new Error("the fake WhatsApp has no such group");
    expect(alice.removeFromGroup(group, bob.account)).toMatchObject([{ status: "200" }]);
    expect(await participant("remove", bob.jid)).toEqual({
      jid,
      action: "remove",
      participants: [bob.jid],
      author: alice.jid,
    });
    alice.renameGroup(group, "Board 2026");
    const renamed = await webhook<{ jid: string; subject?: string }>(
      "group.update",
      "group.update with the new subject",
      (data) => data.jid === jid && data.subject === "Board 2026",
    );
    expect(renamed).toMatchObject({ subject: "Board 2026" });

    const stored = await eventually(
      async () => {
        const res = await api.call<Envelope<Group[]>>("GET", `/api/groups/${SID}`);
        const found = res.body.data.find((candidate) => candidate.jid === jid);
        return found?.subject === "Board 2026" && found.participants.length === 3 ? found : undefined;
      },
      30_000,
      "the stored group",
    );
    const held = [...group.members].map((account) => ({
      id: `${account.pnUser}@s.whatsapp.net`,
      admin: group.admins.get(account) ?? null,
    }));
    expect(byId(stored.participants)).toEqual(byId(held));
    expect(byId(stored.participants)).toEqual(
      byId([
        { id: ME, admin: "superadmin" },
        { id: alice.jid, admin: "admin" },
        { id: carol.jid, admin: null },
      ]),
    );
    expect(stored).toMatchObject({ subject: group.subject, owner: ME });

    // Each change once: an operation's own result and WhatsApp's echo of it (the account's companion
    // is told too) make one webhook, whichever arrives first.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const all = async (event: string) =>
      ((await webhookData(world.receiver, SID, event)) as Array<{ jid: string }>).filter(
        (data) => data.jid === jid,
      );
    expect(await all("group.upsert")).toHaveLength(1);
    expect(
      ((await all("group.participant")) as ParticipantWebhook[]).map((data) => [
        data.action,
        data.participants,
      ]),
    ).toEqual([
      ["add", [carol.jid]],
      ["promote", [alice.jid]],
      ["remove", [bob.jid]],
    ]);
    expect(await all("group.update")).toEqual([{ jid, subject: "Board 2026" }]);
  }, 180_000);

  it("detail, settings, description, invite link and leaving, each as the fake WhatsApp then holds it", async () => {
    const groups = await api.call<Envelope<Group[]>>("GET", `/api/groups/${SID}`);
    const jid = groups.body.data[0]?.jid ?? "";
    const group = whatsapp.messaging.groups.get(jid);
    if (!group) throw new Error("the fake WhatsApp has no such group");
    const path = (rest = "") => `/api/groups/${SID}/${jidPath(jid)}${rest}`;

    const detail = await api.call<Envelope<Group & { pictureUrl: string | null }>>("GET", path());
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({ jid, subject: group.subject, pictureUrl: null });

    expect((await api.call("PUT", path("/settings"), { setting: "announcement" })).status).toBe(200);
    expect((await api.call("PUT", path("/description"), { description: "Quarterly" })).status).toBe(200);
    expect(group).toMatchObject({ announce: true, description: { text: "Quarterly" } });
    const updates = await eventually(
      async () => {
        const found = ((await webhookData(world.receiver, SID, "group.update")) as object[]).filter(
          (data) => (data as { jid: string }).jid === jid,
        );
        return found.length >= 3 ? found : undefined;
      },
      30_000,
      "the settings and description webhooks",
    );
    expect(updates.slice(1)).toEqual([
      { jid, announce: true },
      { jid, description: "Quarterly" },
    ]);

    const invite = await api.call<Envelope<{ inviteCode: string; inviteUrl: string }>>(
      "GET",
      path("/invite"),
    );
    expect(invite.body.data).toEqual({
      inviteCode: group.inviteCode,
      inviteUrl: `https://chat.whatsapp.com/${group.inviteCode}`,
    });
    const revoked = await api.call<Envelope<{ inviteCode: string }>>("PUT", path("/invite"));
    expect(revoked.body.data.inviteCode).toBe(group.inviteCode);
    expect(revoked.body.data.inviteCode).not.toBe(invite.body.data.inviteCode);

    expect((await api.call("POST", path("/leave"))).status).toBe(200);
    expect(group.members.map((member) => member.pnUser)).not.toContain(PHONE);
    const after = await api.call<Envelope<Group[]>>("GET", `/api/groups/${SID}`);
    expect(after.body.data.map((stored) => stored.jid)).not.toContain(jid);
    expect((await api.call("GET", path())).status).toBe(404);
    // WhatsApp's own report of the leave (a `remove` naming the account, by the account).
    const left = await webhook<ParticipantWebhook>(
      "group.participant",
      "group.participant for the leave",
      (data) => data.jid === jid && data.action === "remove" && data.participants.includes(ME),
    );
    expect(left).toEqual({ jid, action: "remove", participants: [ME], author: ME });
  }, 120_000);
});
