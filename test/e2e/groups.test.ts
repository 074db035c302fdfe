// Groups end to end: HTTP → Worker → SessionDO → bridge → simulated WhatsApp, and WhatsApp's events
// back into the local store that GET /api/groups reads.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually, ownerClient } from "../support/api.ts";
import { connectedSession, type Envelope, jidPath, personJid, rawCall, world } from "../support/messaging.ts";
import { type Stack, startStack } from "../support/stack.ts";

type Participant = { id: string; admin: "admin" | "superadmin" | null };
/** The fields read directly; the rest are checked with toMatchObject. */
type Group = {
  jid: string;
  subject: string;
  description: string | null;
  size: number;
  participants: Participant[];
  ephemeral: number;
};
type WorldState = { groups: Array<{ jid: string; subject: string; participants: Participant[] }> };

let stack: Stack;
let api: ApiClient;
let other: ApiClient;
let counter = 0;
const uniqueId = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;

beforeAll(async () => {
  stack = await startStack({ env: { SIMULATOR: "1" } });
  api = await adminClient(stack.baseUrl);
  other = await ownerClient(stack.baseUrl, api);
});

afterAll(async () => {
  await stack?.stop();
});

const list = async (sid: string) =>
  (await api.call<Envelope<Group[]>>("GET", `/api/groups/${sid}`)).body.data;
const stored = async (sid: string, jid: string) => (await list(sid)).find((group) => group.jid === jid);
const worldGroup = async (sid: string, jid: string) =>
  (await world<WorldState>(api, sid, "state")).groups.find((group) => group.jid === jid);
const groupPath = (sid: string, jid: string, rest = "") => `/api/groups/${sid}/${jidPath(jid)}${rest}`;

/** A 1×1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);
function pictureForm(bytes: Uint8Array, type = "image/png", name = "pic.png"): FormData {
  const form = new FormData();
  form.append("file", new Blob([bytes], { type }), name);
  return form;
}

async function createGroup(sid: string, subject: string): Promise<string> {
  const created = await api.call<Envelope<{ group: Group }>>("POST", `/api/groups/${sid}/create`, {
    subject,
    participants: [personJid()],
  });
  expect(created.status).toBe(200);
  return created.body.data.group.jid;
}

describe("groups the account is added to", () => {
  it("appear in GET /api/groups without a reconnect, with community fields, and follow peer updates", async () => {
    const sid = uniqueId("grp-added");
    await connectedSession(api, sid);
    const [alice, bob] = [personJid(), personJid()];
    const community = await world<{ jid: string }>(api, sid, "group.add", {
      subject: "Parents",
      participants: [alice, bob],
      isCommunity: true,
    });
    const sub = await world<{ jid: string }>(api, sid, "group.add", {
      subject: "Class 3B",
      participants: [alice],
      linkedParentJid: community.jid,
    });
    const groups = await eventually(async () => {
      const all = await list(sid);
      return all.length === 2 ? all : undefined;
    });
    expect(groups.map((group) => group.subject)).toEqual(["Class 3B", "Parents"]);
    const [subGroup, parent] = groups;
    expect(parent).toMatchObject({
      id: community.jid,
      jid: community.jid,
      isCommunity: true,
      linkedParentJid: null,
      owner: alice,
      size: 3,
      announce: false,
      restrict: false,
      ephemeral: 0,
    });
    expect(parent?.participants).toContainEqual({ id: alice, admin: "superadmin" });
    expect(subGroup).toMatchObject({
      jid: sub.jid,
      isCommunity: false,
      linkedParentJid: community.jid,
      size: 2,
    });

    await world(api, sid, "group.peer-update", {
      jid: community.jid,
      subject: "Parents 2025",
      description: "Hi",
    });
    const renamed = await eventually(async () => {
      const group = await stored(sid, community.jid);
      return group?.subject === "Parents 2025" ? group : undefined;
    });
    expect(renamed).toMatchObject({ description: "Hi", desc: "Hi" });
  });

  it("a plain member may read the group but not administer it (403 from WhatsApp)", async () => {
    const sid = uniqueId("grp-member");
    await connectedSession(api, sid);
    const { jid } = await world<{ jid: string }>(api, sid, "group.add", {
      subject: "Neighbours",
      participants: [personJid()],
    });
    const detail = await api.call<Envelope<Group & { pictureUrl: string | null }>>(
      "GET",
      groupPath(sid, jid),
    );
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({ jid, subject: "Neighbours", pictureUrl: null });
    const settings = await api.call("PUT", groupPath(sid, jid, "/settings"), { setting: "announcement" });
    expect(settings.status).toBe(403);
    expect(settings.body).toMatchObject({ status: false });
    const members = await api.call("PUT", groupPath(sid, jid, "/members"), {
      action: "add",
      participants: [personJid()],
    });
    expect(members.status).toBe(403);
    expect((await api.call("GET", groupPath(sid, jid, "/invite"))).status).toBe(403);
  });
});

describe("group administration", () => {
  it("create, rename, describe, members, settings, ephemeral, invite, picture, leave: each visible at once", async () => {
    const sid = uniqueId("grp-admin");
    const me = await connectedSession(api, sid);
    const [p1, p2, p3] = [personJid(), personJid(), personJid()];

    const created = await api.call<Envelope<{ group: Group }>>("POST", `/api/groups/${sid}/create`, {
      subject: "Team",
      participants: [p1, p2],
    });
    expect(created.status).toBe(200);
    const { group } = created.body.data;
    expect(group.jid).toMatch(/^\d+@g\.us$/);
    expect(group).toMatchObject({ subject: "Team", owner: me, size: 3 });
    expect(group.participants).toContainEqual({ id: me, admin: "superadmin" });
    const jid = group.jid;
    expect(await stored(sid, jid)).toMatchObject({ subject: "Team", size: 3 });

    const subject = await api.call<Envelope<{ subject: string }>>("PUT", groupPath(sid, jid, "/subject"), {
      subject: "Team 2",
    });
    expect(subject.status).toBe(200);
    expect(subject.body.data).toEqual({ subject: "Team 2" });
    expect((await stored(sid, jid))?.subject).toBe("Team 2");
    expect((await worldGroup(sid, jid))?.subject).toBe("Team 2");

    const described = await api.call("PUT", groupPath(sid, jid, "/description"), { description: "About us" });
    expect(described.status).toBe(200);
    expect((await stored(sid, jid))?.description).toBe("About us");
    const cleared = await api.call<Envelope<{ description: null }>>(
      "PUT",
      groupPath(sid, jid, "/description"),
      {
        description: "",
      },
    );
    expect(cleared.body.data).toEqual({ description: null });
    expect((await stored(sid, jid))?.description).toBeNull();

    const members = (action: string, participants: string[]) =>
      api.call<Envelope<{ result: Array<{ jid: string; status: string }> }>>(
        "PUT",
        groupPath(sid, jid, "/members"),
        { action, participants },
      );
    const added = await members("add", [p3, p1]);
    expect(added.status).toBe(200);
    expect(added.body.data.result).toEqual([
      { jid: p3, status: "200" },
      { jid: p1, status: "409" },
    ]);
    expect((await stored(sid, jid))?.size).toBe(4);
    expect((await members("promote", [p3])).status).toBe(200);
    expect((await stored(sid, jid))?.participants).toContainEqual({ id: p3, admin: "admin" });
    expect((await members("demote", [p3])).status).toBe(200);
    expect((await stored(sid, jid))?.participants).toContainEqual({ id: p3, admin: null });
    expect((await members("remove", [p2])).status).toBe(200);
    const afterRemove = await stored(sid, jid);
    expect(afterRemove?.participants.map((p) => p.id)).not.toContain(p2);
    expect((await worldGroup(sid, jid))?.participants.map((p) => p.id)).not.toContain(p2);

    const invite = await api.call<Envelope<{ inviteCode: string; inviteUrl: string }>>(
      "GET",
      groupPath(sid, jid, "/invite"),
    );
    expect(invite.status).toBe(200);
    expect(invite.body.data.inviteUrl).toBe(`https://chat.whatsapp.com/${invite.body.data.inviteCode}`);
    const revoked = await api.call<Envelope<{ inviteCode: string; inviteUrl: string }>>(
      "PUT",
      groupPath(sid, jid, "/invite"),
    );
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.inviteCode).not.toBe(invite.body.data.inviteCode);
    expect(revoked.body.data.inviteUrl).toBe(`https://chat.whatsapp.com/${revoked.body.data.inviteCode}`);

    expect(
      (await api.call("PUT", groupPath(sid, jid, "/settings"), { setting: "announcement" })).status,
    ).toBe(200);
    expect(await stored(sid, jid)).toMatchObject({ announce: true, restrict: false });
    expect((await api.call("PUT", groupPath(sid, jid, "/settings"), { setting: "locked" })).status).toBe(200);
    expect(await stored(sid, jid)).toMatchObject({ announce: true, restrict: true });
    expect(
      (await api.call("PUT", groupPath(sid, jid, "/settings"), { setting: "not_announcement" })).status,
    ).toBe(200);
    expect(await stored(sid, jid)).toMatchObject({ announce: false, restrict: true });

    const week = await api.call<Envelope<{ expiration: number; expirationLabel: string }>>(
      "PUT",
      groupPath(sid, jid, "/ephemeral"),
      { expiration: 604800 },
    );
    expect(week.body.data).toEqual({ expiration: 604800, expirationLabel: "7 days" });
    expect((await stored(sid, jid))?.ephemeral).toBe(604800);
    const off = await api.call<Envelope<{ expirationLabel: string }>>(
      "PUT",
      groupPath(sid, jid, "/ephemeral"),
      {
        expiration: 0,
      },
    );
    expect(off.body.data.expirationLabel).toBe("Off");
    expect((await stored(sid, jid))?.ephemeral).toBe(0);

    const picture = await rawCall(stack.baseUrl, api, "PUT", groupPath(sid, jid, "/picture"), {
      body: pictureForm(PNG),
    });
    expect(picture.status).toBe(200);
    expect((picture.body as Envelope<{ pictureUrl: string | null }>).data.pictureUrl).toContain(
      "sim.invalid",
    );
    const withPicture = await api.call<Envelope<{ pictureUrl: string | null }>>("GET", groupPath(sid, jid));
    expect(withPicture.body.data.pictureUrl).not.toBeNull();
    expect((await api.call("DELETE", groupPath(sid, jid, "/picture"))).status).toBe(200);
    const withoutPicture = await api.call<Envelope<{ pictureUrl: string | null }>>(
      "GET",
      groupPath(sid, jid),
    );
    expect(withoutPicture.body.data.pictureUrl).toBeNull();

    const left = await api.call("POST", groupPath(sid, jid, "/leave"));
    expect(left.status).toBe(200);
    expect(await stored(sid, jid)).toBeUndefined();
    expect(await worldGroup(sid, jid)).toBeUndefined();
    expect((await api.call("GET", groupPath(sid, jid))).status).toBe(404);
  });

  it("another session joins by invite code and sees the group at once; a bad code is 400", async () => {
    const owner = uniqueId("grp-inviter");
    const joiner = uniqueId("grp-joiner");
    await connectedSession(api, owner);
    const joinerJid = await connectedSession(api, joiner);
    const jid = await createGroup(owner, "Open house");
    const invite = await api.call<Envelope<{ inviteCode: string }>>("GET", groupPath(owner, jid, "/invite"));
    const accepted = await api.call<Envelope<{ groupJid: string }>>(
      "POST",
      `/api/groups/${joiner}/invite/accept`,
      {
        inviteCode: invite.body.data.inviteCode,
      },
    );
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toEqual({ groupJid: jid });
    expect(await stored(joiner, jid)).toMatchObject({ subject: "Open house", size: 3 });
    // The owner's copy learns of the new member from WhatsApp's event.
    await eventually(async () =>
      (await stored(owner, jid))?.participants.some((p) => p.id === joinerJid) ? true : undefined,
    );
    const bad = await api.call("POST", `/api/groups/${joiner}/invite/accept`, {
      inviteCode: "NoSuchCode123",
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: false });
  });
});

describe("group request errors", () => {
  it("400 for bad JIDs, bodies and unknown fields; 413/400 for pictures", async () => {
    const sid = uniqueId("grp-400");
    await connectedSession(api, sid);
    const jid = await createGroup(sid, "Checks");
    const person = personJid();
    const cases: Array<[string, string, unknown]> = [
      ["GET", groupPath(sid, person), undefined],
      ["GET", groupPath(sid, "not-a-jid"), undefined],
      ["POST", `/api/groups/${sid}/create`, { subject: "x", participants: [] }],
      ["POST", `/api/groups/${sid}/create`, { subject: "x", participants: ["12"] }],
      ["POST", `/api/groups/${sid}/create`, { subject: "x", participants: [person], extra: 1 }],
      ["POST", `/api/groups/${sid}/create`, { participants: [person] }],
      ["PUT", groupPath(sid, jid, "/subject"), { subject: "x".repeat(101) }],
      ["PUT", groupPath(sid, jid, "/subject"), { subject: "ok", unknown: true }],
      ["PUT", groupPath(sid, jid, "/description"), { description: "x".repeat(513) }],
      ["PUT", groupPath(sid, jid, "/members"), { action: "kick", participants: [person] }],
      ["PUT", groupPath(sid, jid, "/members"), { action: "add", participants: [] }],
      ["PUT", groupPath(sid, jid, "/settings"), { setting: "open" }],
      ["PUT", groupPath(sid, jid, "/ephemeral"), { expiration: 5 }],
      ["PUT", groupPath(sid, person, "/subject"), { subject: "ok" }],
      ["POST", `/api/groups/${sid}/invite/accept`, { inviteCode: "bad code!" }],
      ["POST", `/api/groups/${sid}/invite/accept`, {}],
    ];
    for (const [method, path, body] of cases) {
      const response = await api.call(method, path, body);
      expect({ method, path, body, status: response.status }).toMatchObject({ status: 400 });
      expect(response.body).toMatchObject({ status: false, message: "Invalid request parameters" });
    }
    expect((await stored(sid, jid))?.subject).toBe("Checks");

    const notImage = await rawCall(stack.baseUrl, api, "PUT", groupPath(sid, jid, "/picture"), {
      body: pictureForm(new TextEncoder().encode("hello"), "image/png"),
    });
    expect(notImage.status).toBe(400);
    const noFile = new FormData();
    noFile.append("other", "x");
    expect(
      (await rawCall(stack.baseUrl, api, "PUT", groupPath(sid, jid, "/picture"), { body: noFile })).status,
    ).toBe(400);
    const big = new Uint8Array(5 * 1024 * 1024 + 1);
    big.set(PNG.subarray(0, 8));
    const tooBig = await rawCall(stack.baseUrl, api, "PUT", groupPath(sid, jid, "/picture"), {
      body: pictureForm(big),
    });
    expect(tooBig.status).toBe(413);
  });

  it("404 for another user's session, as for unknown sessions and groups", async () => {
    const sid = uniqueId("grp-access");
    await connectedSession(api, sid);
    const jid = await createGroup(sid, "Private");
    for (const [method, path, body] of [
      ["GET", `/api/groups/${sid}`, undefined],
      ["GET", groupPath(sid, jid), undefined],
      ["POST", `/api/groups/${sid}/create`, { subject: "x", participants: [personJid()] }],
      ["PUT", groupPath(sid, jid, "/subject"), { subject: "Mine now" }],
      ["POST", groupPath(sid, jid, "/leave"), undefined],
    ] as const) {
      const response = await other.call(method, path, body);
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(response.body).toMatchObject({ status: false, message: "Session not found" });
    }
    expect((await stored(sid, jid))?.subject).toBe("Private");

    expect((await api.call("GET", "/api/groups/no-such-session")).status).toBe(404);
    expect((await api.call("GET", groupPath("no-such-session", jid))).status).toBe(404);
    const unknownGroup = "120363999999999999@g.us";
    expect((await api.call("GET", groupPath(sid, unknownGroup))).status).toBe(404);
    expect((await api.call("PUT", groupPath(sid, unknownGroup, "/subject"), { subject: "x" })).status).toBe(
      404,
    );
  });

  it("503 for operations while the session is stopped; the stored list still answers", async () => {
    const sid = uniqueId("grp-503");
    await connectedSession(api, sid);
    const jid = await createGroup(sid, "Offline");
    expect((await api.call("POST", `/api/sessions/${sid}/stop`)).status).toBe(200);
    for (const [method, path, body] of [
      ["GET", groupPath(sid, jid), undefined],
      ["PUT", groupPath(sid, jid, "/subject"), { subject: "x" }],
      ["POST", `/api/groups/${sid}/create`, { subject: "x", participants: [personJid()] }],
      ["GET", groupPath(sid, jid, "/invite"), undefined],
      ["POST", groupPath(sid, jid, "/leave"), undefined],
    ] as const) {
      const response = await api.call(method, path, body);
      expect({ path, status: response.status }).toEqual({ path, status: 503 });
      expect(response.body).toMatchObject({ status: false, message: "Session not ready" });
    }
    const picture = await rawCall(stack.baseUrl, api, "PUT", groupPath(sid, jid, "/picture"), {
      body: pictureForm(PNG),
    });
    expect(picture.status).toBe(503);
    const groups = await list(sid);
    expect(groups.map((group) => group.subject)).toEqual(["Offline"]);
  });
});
