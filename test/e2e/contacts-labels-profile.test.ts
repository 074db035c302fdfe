// Contacts, labels, profile and status posts end to end, on the simulated WhatsApp network.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually, ownerClient } from "../support/api.ts";
import { connectedSession, type Envelope, jidPath, personJid, rawCall, world } from "../support/messaging.ts";
import { type Stack, startStack } from "../support/stack.ts";

type Contact = {
  jid: string;
  name: string | null;
  notify: string | null;
  verifiedName: string | null;
  profilePic: string | null;
  blocked: boolean;
};
type Meta = { total: number; page: number; limit: number | "all"; totalPages: number };
type Label = { id: string; name: string; color: number; colorHex: string; chatCount: number };
type Profile = { name: string | null; status: string | null; pictureUrl: string | null };
type WorldState = {
  blocked: string[];
  profile: { name: string | null; status: string | null; picture: boolean };
};

let stack: Stack;
let api: ApiClient;
let other: ApiClient;
let media: Server;
let mediaUrl: string;
let counter = 0;
const uniqueId = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;

/** A 1×1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

beforeAll(async () => {
  // Serves the image a status post links to; the bridge fetches it like any public URL.
  media = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "image/png", "content-length": String(PNG.length) });
    response.end(PNG);
  });
  await new Promise<void>((resolve) => media.listen(0, "127.0.0.1", resolve));
  mediaUrl = `http://127.0.0.1:${(media.address() as AddressInfo).port}/photo.png`;
  stack = await startStack({ env: { SIMULATOR: "1" } });
  api = await adminClient(stack.baseUrl);
  other = await ownerClient(stack.baseUrl, api);
});

afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => media?.close(resolve));
});

function pictureForm(bytes: Uint8Array, type = "image/png"): FormData {
  const form = new FormData();
  form.append("file", new Blob([bytes], { type }), "pic.png");
  return form;
}

const contacts = (sid: string, query = "") =>
  api.call<Envelope<Contact[]> & { meta: Meta }>("GET", `/api/contacts/${sid}${query}`);

describe("contacts", () => {
  it("are stored from WhatsApp's events, merged, paged and searched", async () => {
    const sid = uniqueId("contacts");
    await connectedSession(api, sid);
    const [alice, bob, carol] = [personJid(), personJid(), personJid()];
    await world(api, sid, "contact", { jid: alice, name: "Alice", notify: "ali" });
    await world(api, sid, "contact", { jid: bob, notify: "Bob" });
    await world(api, sid, "contact", { jid: carol, name: "Carol", picture: true });
    const all = await eventually(async () => {
      const response = await contacts(sid, "?limit=all");
      return response.body.data.length === 3 ? response.body : undefined;
    });
    expect(all.meta).toEqual({ total: 3, page: 1, limit: "all", totalPages: 1 });
    expect(all.data.map((contact) => contact.jid)).toEqual([alice, bob, carol]);
    expect(all.data[2]).toMatchObject({ name: "Carol", blocked: false });
    expect(all.data[2]?.profilePic).toContain(carol);

    const firstPage = await contacts(sid);
    expect(firstPage.status).toBe(200);
    expect(firstPage.body).toMatchObject({
      status: true,
      meta: { total: 3, page: 1, limit: 10, totalPages: 1 },
    });
    const second = await contacts(sid, "?page=2&limit=2");
    expect(second.body.data.map((contact) => contact.jid)).toEqual([carol]);
    expect(second.body.meta).toEqual({ total: 3, page: 2, limit: 2, totalPages: 2 });

    const names = async (query: string) =>
      (await contacts(sid, query)).body.data.map((contact) => contact.jid);
    expect(await names("?search=ALI")).toEqual([alice]);
    expect(await names("?search=bob")).toEqual([bob]);
    expect(await names(`?search=${carol.slice(0, 12)}`)).toEqual([carol]);
    expect(await names("?search=%25")).toEqual([]);

    // A later event with only a push name keeps the saved name.
    await world(api, sid, "contact", { jid: alice, notify: "ally" });
    const merged = await eventually(async () => {
      const found = (await contacts(sid, "?limit=all")).body.data.find((contact) => contact.jid === alice);
      return found?.notify === "ally" ? found : undefined;
    });
    expect(merged.name).toBe("Alice");
  });

  it("block and unblock on WhatsApp, and the stored flag follows", async () => {
    const sid = uniqueId("block");
    await connectedSession(api, sid);
    const [known, stranger] = [personJid(), personJid()];
    await world(api, sid, "contact", { jid: known, name: "Known" });
    await eventually(async () => ((await contacts(sid)).body.data.length === 1 ? true : undefined));

    const blocked = await api.call<Envelope<{ jid: string; blocked: boolean }>>(
      "POST",
      `/api/contacts/${sid}/${jidPath(known)}/block`,
    );
    expect(blocked.status).toBe(200);
    expect(blocked.body.data).toEqual({ jid: known, blocked: true });
    expect((await world<WorldState>(api, sid, "state")).blocked).toContain(known);
    expect((await contacts(sid)).body.data.find((contact) => contact.jid === known)).toMatchObject({
      name: "Known",
      blocked: true,
    });

    expect((await api.call("POST", `/api/contacts/${sid}/${jidPath(stranger)}/block`)).status).toBe(200);
    expect((await contacts(sid, `?search=${stranger.slice(0, 12)}`)).body.data).toMatchObject([
      { jid: stranger, blocked: true },
    ]);

    expect((await api.call("POST", `/api/contacts/${sid}/${jidPath(known)}/unblock`)).status).toBe(200);
    expect((await world<WorldState>(api, sid, "state")).blocked).not.toContain(known);
    expect((await contacts(sid)).body.data.find((contact) => contact.jid === known)?.blocked).toBe(false);
  });

  it("400 / 404 / 503", async () => {
    const sid = uniqueId("contacts-err");
    await connectedSession(api, sid);
    for (const query of ["?limit=0", "?limit=abc", "?page=0", "?limit=1001"]) {
      expect((await contacts(sid, query)).status).toBe(400);
    }
    expect(
      (await api.call("POST", `/api/contacts/${sid}/${jidPath("120363000000000001@g.us")}/block`)).status,
    ).toBe(400);
    expect((await api.call("POST", `/api/contacts/${sid}/not-a-jid/block`)).status).toBe(400);
    const forbidden = await other.call("GET", `/api/contacts/${sid}`);
    expect(forbidden.status).toBe(404);
    expect(forbidden.body).toMatchObject({ status: false, message: "Session not found" });
    expect((await other.call("POST", `/api/contacts/${sid}/${jidPath(personJid())}/block`)).status).toBe(404);
    expect((await api.call("GET", "/api/contacts/no-such-session")).status).toBe(404);

    expect((await api.call("POST", `/api/sessions/${sid}/stop`)).status).toBe(200);
    const offline = await api.call("POST", `/api/contacts/${sid}/${jidPath(personJid())}/block`);
    expect(offline.status).toBe(503);
    expect(offline.body).toMatchObject({ status: false, message: "Session not ready" });
    expect((await contacts(sid)).status).toBe(200);
  });
});

describe("labels", () => {
  it("create, rename, assign to chats, list by label and delete, with no WhatsApp connection", async () => {
    // Labels are the gateway's own: a session that never started has them too.
    const sid = uniqueId("labels");
    expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
    const create = (body: unknown) =>
      api.call<Envelope<{ label: Label }>>("POST", `/api/labels/${sid}`, body);

    const vip = await create({ name: "VIP", color: 3 });
    expect(vip.status).toBe(200);
    expect(vip.body.data.label).toMatchObject({ name: "VIP", color: 3, colorHex: "#00FF00", chatCount: 0 });
    const lead = (await create({ name: "Lead" })).body.data.label;
    expect(lead).toMatchObject({ color: 0, colorHex: "#FF0000" });
    const duplicate = await create({ name: "vip" });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toMatchObject({ status: false });

    const renamed = await api.call<Envelope<{ label: Label }>>("PUT", `/api/labels/${sid}/${lead.id}`, {
      name: "Leads",
      color: 19,
    });
    expect(renamed.body.data.label).toMatchObject({ id: lead.id, name: "Leads", colorHex: "#F0E68C" });
    expect((await api.call("PUT", `/api/labels/${sid}/${lead.id}`, { name: "VIP" })).status).toBe(409);
    expect(
      (await api.call("PUT", `/api/labels/${sid}/${vip.body.data.label.id}`, { name: "vip" })).status,
    ).toBe(200);

    const chat = personJid();
    const chatPath = `/api/labels/${sid}/chat/${jidPath(chat)}/labels`;
    const assign = (labelIds: string[], action: string) =>
      api.call<Envelope<{ labels: Label[] }>>("PUT", chatPath, { labelIds, action });
    const vipId = vip.body.data.label.id;
    const added = await assign([vipId, lead.id], "add");
    expect(added.status).toBe(200);
    expect(added.body.data.labels.map((label) => label.name)).toEqual(["Leads", "vip"]);
    expect((await api.call<Envelope<{ labels: Label[] }>>("GET", chatPath)).body.data.labels).toHaveLength(2);
    const byLabel = await api.call<Envelope<{ label: Label; chats: string[]; count: number }>>(
      "GET",
      `/api/chats/${sid}/by-label/${vipId}`,
    );
    expect(byLabel.body.data).toMatchObject({ label: { id: vipId }, chats: [chat], count: 1 });
    const listed = await api.call<Envelope<{ labels: Label[] }>>("GET", `/api/labels/${sid}`);
    expect(listed.body.data.labels.map((label) => [label.name, label.chatCount])).toEqual([
      ["Leads", 1],
      ["vip", 1],
    ]);

    expect((await assign([vipId, "no-such-label"], "remove")).status).toBe(404);
    expect((await api.call<Envelope<{ labels: Label[] }>>("GET", chatPath)).body.data.labels).toHaveLength(2);
    expect((await assign([vipId], "remove")).body.data.labels.map((label) => label.name)).toEqual(["Leads"]);

    expect((await api.call("DELETE", `/api/labels/${sid}/${lead.id}`)).status).toBe(200);
    expect((await api.call<Envelope<{ labels: Label[] }>>("GET", chatPath)).body.data.labels).toEqual([]);
    expect((await api.call("GET", `/api/chats/${sid}/by-label/${lead.id}`)).status).toBe(404);
    expect((await api.call("DELETE", `/api/labels/${sid}/${lead.id}`)).status).toBe(404);
    expect((await api.call("PUT", `/api/labels/${sid}/${lead.id}`, { name: "Gone" })).status).toBe(404);
    const remaining = await api.call<Envelope<{ labels: Label[] }>>("GET", `/api/labels/${sid}`);
    expect(remaining.body.data.labels.map((label) => label.name)).toEqual(["vip"]);
  });

  it("400 / 404", async () => {
    const sid = uniqueId("labels-err");
    expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
    const label = (await api.call<Envelope<{ label: Label }>>("POST", `/api/labels/${sid}`, { name: "A" }))
      .body.data.label;
    const cases: Array<[string, string, unknown]> = [
      ["POST", `/api/labels/${sid}`, { name: "" }],
      ["POST", `/api/labels/${sid}`, { name: "B", color: 20 }],
      ["POST", `/api/labels/${sid}`, { name: "B", colour: 1 }],
      ["PUT", `/api/labels/${sid}/${label.id}`, {}],
      ["PUT", `/api/labels/${sid}/chat/not-a-jid/labels`, { labelIds: [label.id], action: "add" }],
      [
        "PUT",
        `/api/labels/${sid}/chat/${jidPath(personJid())}/labels`,
        { labelIds: [label.id], action: "tag" },
      ],
      ["PUT", `/api/labels/${sid}/chat/${jidPath(personJid())}/labels`, { labelIds: [], action: "add" }],
    ];
    for (const [method, path, body] of cases) {
      const response = await api.call(method, path, body);
      expect({ path, body, status: response.status }).toMatchObject({ status: 400 });
    }
    expect((await other.call("GET", `/api/labels/${sid}`)).status).toBe(404);
    expect((await other.call("POST", `/api/labels/${sid}`, { name: "Theirs" })).status).toBe(404);
    expect((await other.call("GET", `/api/chats/${sid}/by-label/${label.id}`)).status).toBe(404);
    expect((await api.call("GET", "/api/labels/no-such-session")).status).toBe(404);
    expect((await api.call("GET", `/api/chats/${sid}/by-label/unknown`)).status).toBe(404);
  });
});

describe("profile and status", () => {
  it("name, about text and picture change on WhatsApp and read back", async () => {
    const sid = uniqueId("profile");
    await connectedSession(api, sid);
    const profile = async () => (await api.call<Envelope<Profile>>("GET", `/api/profile/${sid}`)).body.data;
    expect(await profile()).toMatchObject({ status: null, pictureUrl: null });

    expect((await api.call("PUT", `/api/profile/${sid}/name`, { name: "Front desk" })).status).toBe(200);
    expect((await api.call("PUT", `/api/profile/${sid}/status`, { status: "Open 9-5" })).status).toBe(200);
    expect(await profile()).toMatchObject({ name: "Front desk", status: "Open 9-5" });
    expect((await world<WorldState>(api, sid, "state")).profile).toMatchObject({
      name: "Front desk",
      status: "Open 9-5",
    });

    const set = await rawCall(stack.baseUrl, api, "PUT", `/api/profile/${sid}/picture`, {
      body: pictureForm(PNG),
    });
    expect(set.status).toBe(200);
    expect((set.body as Envelope<{ pictureUrl: string }>).data.pictureUrl).toContain("sim.invalid");
    expect((await world<WorldState>(api, sid, "state")).profile.picture).toBe(true);
    expect((await profile()).pictureUrl).not.toBeNull();
    expect((await api.call("DELETE", `/api/profile/${sid}/picture`)).status).toBe(200);
    expect((await world<WorldState>(api, sid, "state")).profile.picture).toBe(false);
    expect((await profile()).pictureUrl).toBeNull();
  });

  it("status posts: text with style, and an image by URL", async () => {
    const sid = uniqueId("status");
    await connectedSession(api, sid);
    const post = (body: unknown) =>
      api.call<Envelope<{ remoteJid: string; type: string; content: string | null; fromMe: boolean }>>(
        "POST",
        `/api/status/${sid}/update`,
        body,
      );
    const text = await post({
      content: "Closed today",
      backgroundColor: "#112233",
      font: 2,
      mentions: [personJid()],
    });
    expect(text.status).toBe(200);
    expect(text.body.data).toMatchObject({
      remoteJid: "status@broadcast",
      type: "TEXT",
      content: "Closed today",
      fromMe: true,
    });
    // A fresh session knows no contacts: the audience is named (without it, a 409 says so).
    const image = await post({ content: "New menu", type: "IMAGE", mediaUrl, mentions: [personJid()] });
    expect(image.status).toBe(200);
    expect(image.body.data).toMatchObject({
      remoteJid: "status@broadcast",
      type: "IMAGE",
      content: "New menu",
    });

    for (const body of [
      { content: "" },
      { content: "x", type: "IMAGE" },
      { content: "x", mediaUrl },
      { content: "x", backgroundColor: "red" },
      { content: "x", font: 11 },
      { content: "x", mentions: ["123"] },
      { content: "x", type: "AUDIO", mediaUrl },
      { content: "x", extra: true },
    ]) {
      expect({ body, status: (await post(body)).status }).toEqual({ body, status: 400 });
    }
  });

  it("400 / 404 / 413 / 503", async () => {
    const sid = uniqueId("profile-err");
    await connectedSession(api, sid);
    expect((await api.call("PUT", `/api/profile/${sid}/name`, { name: "x".repeat(26) })).status).toBe(400);
    expect((await api.call("PUT", `/api/profile/${sid}/name`, { name: "ok", extra: 1 })).status).toBe(400);
    expect((await api.call("PUT", `/api/profile/${sid}/status`, { status: "x".repeat(140) })).status).toBe(
      400,
    );
    const notImage = await rawCall(stack.baseUrl, api, "PUT", `/api/profile/${sid}/picture`, {
      body: pictureForm(new TextEncoder().encode("plain text"), "text/plain"),
    });
    expect(notImage.status).toBe(400);
    const big = new Uint8Array(5 * 1024 * 1024 + 1);
    big.set(PNG.subarray(0, 8));
    const tooBig = await rawCall(stack.baseUrl, api, "PUT", `/api/profile/${sid}/picture`, {
      body: pictureForm(big),
    });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toMatchObject({ status: false });
    const json = await api.call("PUT", `/api/profile/${sid}/picture`, { file: "x" });
    expect(json.status).toBe(415);
    expect((await world<WorldState>(api, sid, "state")).profile.picture).toBe(false);

    expect((await other.call("GET", `/api/profile/${sid}`)).status).toBe(404);
    expect((await other.call("PUT", `/api/profile/${sid}/name`, { name: "Mine" })).status).toBe(404);
    expect((await other.call("POST", `/api/status/${sid}/update`, { content: "hi" })).status).toBe(404);
    expect((await api.call("GET", "/api/profile/no-such-session")).status).toBe(404);
    expect((await api.call("POST", "/api/status/no-such-session/update", { content: "hi" })).status).toBe(
      404,
    );

    expect((await api.call("POST", `/api/sessions/${sid}/stop`)).status).toBe(200);
    for (const [method, path, body] of [
      ["GET", `/api/profile/${sid}`, undefined],
      ["PUT", `/api/profile/${sid}/name`, { name: "Later" }],
      ["PUT", `/api/profile/${sid}/status`, { status: "Later" }],
      ["DELETE", `/api/profile/${sid}/picture`, undefined],
      ["POST", `/api/status/${sid}/update`, { content: "Later" }],
    ] as const) {
      const response = await api.call(method, path, body);
      expect({ path, status: response.status }).toEqual({ path, status: 503 });
      expect(response.body).toMatchObject({ status: false, message: "Session not ready" });
    }
    const picture = await rawCall(stack.baseUrl, api, "PUT", `/api/profile/${sid}/picture`, {
      body: pictureForm(PNG),
    });
    expect(picture.status).toBe(503);
  });
});
