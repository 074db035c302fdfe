// The contract every messaging endpoint keeps, checked endpoint by endpoint on the real stack:
// an unknown session is 404, another user's session is 404 too (ids are not probeable), a malformed JID or body is 400, and a
// session whose WhatsApp is down answers 503 "Session not ready" for anything that needs the network,
// while stored data (history, chats, contacts, groups, labels, schedules…) stays readable.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually, ownerClient } from "../support/api.ts";
import { connectedSession, type Envelope, jidPath, personJid, rawCall, world } from "../support/messaging.ts";
import { type Stack, startStack } from "../support/stack.ts";

let stack: Stack;
let admin: ApiClient;
let stranger: ApiClient;
const LIVE = "contract-live";
const DOWN = "contract-down";
const PEER = personJid();
const GROUP = "120363000000000001@g.us";
// Filled in beforeAll; until then (while tests are collected and named) they read as placeholders.
let sentId = "{messageId}";
let receivedId = "{messageId}";

beforeAll(async () => {
  stack = await startStack({ env: { SIMULATOR: "1" } });
  admin = await adminClient(stack.baseUrl);
  stranger = await ownerClient(stack.baseUrl, admin, "stranger");
  await connectedSession(admin, LIVE);
  await connectedSession(admin, DOWN);
  const sent = await admin.call<Envelope<{ id: string }>>(
    "POST",
    `/api/messages/${DOWN}/${jidPath(PEER)}/send`,
    {
      message: { text: "before the outage" },
    },
  );
  sentId = sent.body.data.id;
  receivedId = (
    await world<{ id: string }>(admin, DOWN, "receive", {
      from: PEER,
      content: {
        type: "document",
        base64: Buffer.from("%PDF").toString("base64"),
        mimetype: "application/pdf",
      },
    })
  ).id;
  await eventually(async () => {
    const history = await admin.call<Envelope<{ id: string }[]>>("GET", `/api/chat/${DOWN}/${jidPath(PEER)}`);
    return history.body.data.some((m) => m.id === receivedId) ? true : undefined;
  });
  expect((await admin.call("POST", `/api/sessions/${DOWN}/stop`)).status).toBe(200);
});

afterAll(async () => {
  await stack?.stop();
});

type Endpoint = {
  method: string;
  path: (sid: string) => string;
  /** A valid body, or a function building it once the fixtures exist. */
  body?: unknown;
  /** A body that must answer 400. */
  badBody?: unknown;
  /** Needs WhatsApp: 503 while the session is down (else: works, 200). */
  network: boolean;
  /** Multipart upload: `document` for messages, `image` for pictures. */
  multipart?: "document" | "image";
};

/** The smallest valid PNG (1×1), for picture uploads. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
const j = jidPath(PEER);
const g = jidPath(GROUP);
const text = { message: { text: "x" } };
const ENDPOINTS: Endpoint[] = [
  {
    method: "POST",
    path: (s) => `/api/messages/${s}/${j}/send`,
    body: text,
    badBody: { message: 1 },
    network: true,
  },
  { method: "POST", path: (s) => `/api/messages/${s}/${j}/media`, multipart: "document", network: true },
  {
    method: "POST",
    path: (s) => `/api/messages/${s}/${j}/poll`,
    body: { question: "q", options: ["a", "b"] },
    badBody: { question: "q", options: ["a"] },
    network: true,
  },
  {
    method: "POST",
    path: (s) => `/api/messages/${s}/${j}/location`,
    body: { latitude: 1, longitude: 2 },
    badBody: { latitude: 100, longitude: 2 },
    network: true,
  },
  {
    method: "POST",
    path: (s) => `/api/messages/${s}/${j}/contact`,
    body: { contacts: [{ displayName: "A", vcard: "BEGIN:VCARD\nEND:VCARD" }] },
    badBody: { contacts: [{}] },
    network: true,
  },
  {
    method: "POST",
    path: (s) => `/api/messages/${s}/${j}/list`,
    body: { title: "t", options: ["a"] },
    badBody: { title: "t" },
    network: true,
  },
  {
    method: "POST",
    path: (s) => `/api/messages/${s}/${j}/${sentId}/react`,
    body: { emoji: "👍" },
    badBody: { emoji: 1 },
    network: true,
  },
  {
    method: "POST",
    path: (s) => `/api/messages/${s}/${j}/${sentId}/reply`,
    body: { message: "r" },
    badBody: {},
    network: true,
  },
  {
    method: "POST",
    path: (s) => `/api/messages/${s}/${j}/reply`,
    body: () => ({ messageId: sentId, message: "r" }),
    badBody: { message: "r" },
    network: true,
  },
  {
    method: "POST",
    path: (s) => `/api/messages/${s}/${j}/${sentId}/star`,
    body: { star: true },
    badBody: { star: "yes" },
    network: true,
  },
  {
    method: "PATCH",
    path: (s) => `/api/messages/${s}/${j}/${sentId}`,
    body: { text: "e" },
    badBody: { text: "" },
    network: true,
  },
  { method: "DELETE", path: (s) => `/api/messages/${s}/${j}/${sentId}`, network: true },
  {
    method: "POST",
    path: (s) => `/api/messages/${s}/forward`,
    body: () => ({ fromJid: PEER, messageId: sentId, toJids: [personJid()] }),
    badBody: { fromJid: PEER, messageId: "m", toJids: ["x"] },
    network: true,
  },
  { method: "GET", path: (s) => `/api/messages/${s}/download/${receivedId}/media`, network: true },
  { method: "GET", path: (s) => `/api/messages/${s}/search?q=outage`, network: false },
  {
    method: "POST",
    path: (s) => `/api/messages/${s}/broadcast`,
    body: { recipients: [PEER], message: "b" },
    badBody: { recipients: ["nope"], message: "b" },
    network: true,
  },
  { method: "GET", path: (s) => `/api/messages/${s}/broadcast/history`, network: false },
  { method: "GET", path: (s) => `/api/chat/${s}`, network: false },
  { method: "GET", path: (s) => `/api/chat/${s}/${j}`, network: false },
  {
    method: "POST",
    path: (s) => `/api/chat/${s}/check`,
    body: { numbers: ["628123456789"] },
    badBody: { numbers: [] },
    network: true,
  },
  {
    method: "PUT",
    path: (s) => `/api/chat/${s}/${j}/read`,
    body: {},
    badBody: { messageIds: "x" },
    network: true,
  },
  {
    method: "PUT",
    path: (s) => `/api/chat/${s}/${j}/archive`,
    body: { archive: true },
    badBody: { archive: 1 },
    network: true,
  },
  {
    method: "PUT",
    path: (s) => `/api/chat/${s}/${j}/mute`,
    body: { mute: true },
    badBody: { mute: true, duration: 1 },
    network: true,
  },
  { method: "PUT", path: (s) => `/api/chat/${s}/${j}/pin`, body: { pin: true }, badBody: {}, network: true },
  {
    method: "POST",
    path: (s) => `/api/chat/${s}/${j}/presence`,
    body: { presence: "composing" },
    badBody: { presence: "x" },
    network: true,
  },
  { method: "POST", path: (s) => `/api/chat/${s}/${j}/profile-picture`, network: true },
  { method: "GET", path: (s) => `/api/contacts/${s}`, network: false },
  { method: "POST", path: (s) => `/api/contacts/${s}/${j}/block`, network: true },
  { method: "POST", path: (s) => `/api/contacts/${s}/${j}/unblock`, network: true },
  { method: "GET", path: (s) => `/api/groups/${s}`, network: false },
  {
    method: "POST",
    path: (s) => `/api/groups/${s}/create`,
    body: { subject: "G", participants: [PEER] },
    badBody: { subject: "G", participants: [] },
    network: true,
  },
  { method: "GET", path: (s) => `/api/groups/${s}/${g}`, network: true },
  {
    method: "PUT",
    path: (s) => `/api/groups/${s}/${g}/subject`,
    body: { subject: "S" },
    badBody: { subject: "" },
    network: true,
  },
  {
    method: "PUT",
    path: (s) => `/api/groups/${s}/${g}/members`,
    body: { action: "add", participants: [PEER] },
    badBody: { action: "kick", participants: [PEER] },
    network: true,
  },
  { method: "GET", path: (s) => `/api/groups/${s}/${g}/invite`, network: true },
  {
    method: "POST",
    path: (s) => `/api/groups/${s}/invite/accept`,
    body: { inviteCode: "AbCdEf123456" },
    badBody: {},
    network: true,
  },
  {
    method: "PUT",
    path: (s) => `/api/groups/${s}/${g}/settings`,
    body: { setting: "locked" },
    badBody: { setting: "x" },
    network: true,
  },
  {
    method: "PUT",
    path: (s) => `/api/groups/${s}/${g}/ephemeral`,
    body: { expiration: 86400 },
    badBody: { expiration: 5 },
    network: true,
  },
  { method: "POST", path: (s) => `/api/groups/${s}/${g}/leave`, network: true },
  {
    method: "PUT",
    path: (s) => `/api/groups/${s}/${g}/description`,
    body: { description: "d" },
    badBody: { description: 5 },
    network: true,
  },
  { method: "PUT", path: (s) => `/api/groups/${s}/${g}/invite`, network: true },
  { method: "PUT", path: (s) => `/api/groups/${s}/${g}/picture`, multipart: "image", network: true },
  { method: "DELETE", path: (s) => `/api/groups/${s}/${g}/picture`, network: true },
  {
    method: "PUT",
    path: (s) => `/api/profile/${s}/status`,
    body: { status: "busy" },
    badBody: { status: 5 },
    network: true,
  },
  { method: "PUT", path: (s) => `/api/profile/${s}/picture`, multipart: "image", network: true },
  { method: "DELETE", path: (s) => `/api/profile/${s}/picture`, network: true },
  {
    method: "POST",
    path: (s) => `/api/labels/${s}`,
    body: () => ({ name: `label-${Math.random().toString(36).slice(2, 8)}` }),
    badBody: { name: "" },
    network: false,
  },
  { method: "GET", path: (s) => `/api/labels/${s}/chat/${j}/labels`, network: false },
  {
    method: "POST",
    path: (s) => `/api/scheduler/${s}`,
    body: () => ({ jid: PEER, content: "later", sendAt: new Date(Date.now() + 3_600_000).toISOString() }),
    badBody: { jid: "nope", content: "later", sendAt: "tomorrow" },
    network: false,
  },
  {
    method: "POST",
    path: (s) => `/api/autoreplies/${s}`,
    body: () => ({ keyword: `k${Math.random().toString(36).slice(2, 8)}`, response: "r" }),
    badBody: { keyword: "" },
    network: false,
  },
  { method: "GET", path: (s) => `/api/labels/${s}`, network: false },
  { method: "GET", path: (s) => `/api/profile/${s}`, network: true },
  {
    method: "PUT",
    path: (s) => `/api/profile/${s}/name`,
    body: { name: "N" },
    badBody: { name: "" },
    network: true,
  },
  {
    method: "POST",
    path: (s) => `/api/status/${s}/update`,
    body: { content: "hi" },
    badBody: { content: "hi", type: "AUDIO" },
    network: true,
  },
  { method: "GET", path: (s) => `/api/scheduler/${s}`, network: false },
  { method: "GET", path: (s) => `/api/autoreplies/${s}`, network: false },
];

const bodyOf = (endpoint: Endpoint) =>
  typeof endpoint.body === "function" ? endpoint.body() : endpoint.body;

async function hit(client: ApiClient, endpoint: Endpoint, sid: string, body = bodyOf(endpoint)) {
  if (endpoint.multipart) {
    const form = new FormData();
    if (endpoint.multipart === "image") form.set("file", new Blob([PNG], { type: "image/png" }), "a.png");
    else {
      form.set("file", new Blob([Buffer.from("%PDF-1.4")], { type: "application/pdf" }), "a.pdf");
      form.set("type", "document");
    }
    return (await rawCall(stack.baseUrl, client, endpoint.method, endpoint.path(sid), { body: form })).status;
  }
  return (await client.call(endpoint.method, endpoint.path(sid), body)).status;
}

const label = (endpoint: Endpoint) => `${endpoint.method} ${endpoint.path("{sid}")}`;

describe("every messaging endpoint", () => {
  it.each(ENDPOINTS.map((endpoint) => [label(endpoint), endpoint] as const))(
    "%s",
    async (_name, endpoint) => {
      expect(await hit(admin, endpoint, "no-such-session"), "unknown session").toBe(404);
      expect(await hit(stranger, endpoint, LIVE), "another user's session").toBe(404);
      if (endpoint.badBody !== undefined)
        expect(await hit(admin, endpoint, LIVE, endpoint.badBody), "bad body").toBe(400);
      const path = endpoint.path(LIVE);
      if (path.includes(j) || path.includes(g)) {
        const badJid = path.replace(j, "12345").replace(g, "not-a-group%40g.us");
        expect((await admin.call(endpoint.method, badJid, bodyOf(endpoint))).status, "bad JID").toBe(400);
      }
      const down = await hit(admin, endpoint, DOWN);
      expect(down, "session down").toBe(endpoint.network ? 503 : 200);
    },
  );

  it("a 503 says the session is not ready, in the gateway envelope", async () => {
    const res = await admin.call("POST", `/api/messages/${DOWN}/${j}/send`, text);
    expect(res).toEqual({
      status: 503,
      body: { status: false, message: "Session not ready", error: expect.any(String) },
    });
  });
});
