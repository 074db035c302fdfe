// Issue 25 (Lows): a session id must not be probeable. A caller with no access to a session gets the
// same answer for its id as for an id that does not exist (404), on every route that takes a session
// id; only a caller who has some access (a viewer) may learn that a write needs more (403).
import { describe, expect, it } from "vitest";
import openapi from "../../../../docs/openapi.json";
import { ownedSession } from "../../connected-session";
import { browse, submit, textOf } from "../../dashboard/helpers";
import { asKey, BASE, call, createUser, fetchWorker, generateKey } from "../../helpers";

const JID = "628123456789@s.whatsapp.net";
const GROUP = "120363000000000001@g.us";
const SESSION = "{S}";

interface Probe {
  method: string;
  /** `{S}` is the session id under test. */
  path: string;
  body?: unknown;
  form?: boolean;
  /** What both ids get, when not 404. */
  status?: number;
}

/** Every operation of the API that names a session, with a body the route accepts. */
const PROBES: Probe[] = [
  { method: "GET", path: "/api/sessions/{S}" },
  { method: "GET", path: "/api/sessions/{S}/qr" },
  // A plain GET reads the event log; the socket itself is probed in its own test below.
  { method: "GET", path: "/api/sessions/{S}/events" },
  // The event stream: a plain GET is 426 before anything else (its socket: event-log.test.ts).
  { method: "GET", path: "/api/sessions/{S}/events/stream", status: 426 },
  { method: "GET", path: "/api/sessions/{S}/settings" },
  { method: "PATCH", path: "/api/sessions/{S}/settings", body: { config: { rejectCalls: true } } },
  { method: "DELETE", path: "/api/sessions/{S}/settings" },
  { method: "PUT", path: "/api/sessions/{S}/proxy", body: { url: "socks5://127.0.0.1:1080" } },
  { method: "DELETE", path: "/api/sessions/{S}/proxy" },
  { method: "POST", path: "/api/sessions/{S}/start" },
  { method: "POST", path: "/api/sessions/{S}/logout" },
  { method: "POST", path: "/api/sessions/{S}/pair", body: { phoneNumber: "628123456789" } },
  { method: "GET", path: "/api/sessions/{S}/bot-config" },
  { method: "POST", path: "/api/sessions/{S}/bot-config", body: { enabled: false } },
  { method: "GET", path: "/api/sessions/{S}/access" },
  { method: "POST", path: "/api/sessions/{S}/access", body: { email: "x@example.test" } },
  { method: "DELETE", path: "/api/sessions/{S}/access", body: { email: "x@example.test" } },
  { method: "POST", path: "/api/sessions/{S}/simulate/scan" },
  { method: "POST", path: "/api/sessions/{S}/simulate/disconnect", body: { code: 428 } },
  { method: "POST", path: "/api/sessions/{S}/simulate/world", body: { action: "reset" } },
  { method: "POST", path: "/api/chat/{S}/send", body: { jid: JID, message: { text: "hi" } } },
  { method: "POST", path: "/api/messages/{S}/broadcast", body: { recipients: [JID], message: "hi" } },
  { method: "GET", path: "/api/messages/{S}/broadcast/history" },
  { method: "GET", path: "/api/messages/{S}/broadcast/history/b1" },
  { method: "POST", path: "/api/messages/{S}/broadcast/b1/cancel" },
  { method: "POST", path: `/api/messages/{S}/${JID}/send`, body: { message: { text: "hi" } } },
  { method: "POST", path: `/api/messages/{S}/${JID}/media`, form: true },
  { method: "POST", path: `/api/messages/{S}/${JID}/poll`, body: { question: "q", options: ["a", "b"] } },
  { method: "POST", path: `/api/messages/{S}/${JID}/location`, body: { latitude: 1, longitude: 2 } },
  {
    method: "POST",
    path: `/api/messages/{S}/${JID}/contact`,
    body: { contacts: [{ displayName: "Ada", vcard: "BEGIN:VCARD\nVERSION:3.0\nFN:Ada\nEND:VCARD" }] },
  },
  {
    method: "POST",
    path: `/api/messages/{S}/${JID}/list`,
    body: { title: "t", options: ["a", "b"] },
  },
  { method: "POST", path: `/api/messages/{S}/${JID}/m1/react`, body: { emoji: "👍" } },
  { method: "POST", path: `/api/messages/{S}/${JID}/m1/reply`, body: { message: "hi" } },
  { method: "POST", path: `/api/messages/{S}/${JID}/reply`, body: { message: "hi", messageId: "m1" } },
  { method: "POST", path: `/api/messages/{S}/${JID}/m1/star`, body: { star: true } },
  { method: "GET", path: `/api/messages/{S}/${JID}/m1` },
  { method: "DELETE", path: `/api/messages/{S}/${JID}/m1` },
  { method: "PATCH", path: `/api/messages/{S}/${JID}/m1`, body: { text: "hi" } },
  {
    method: "POST",
    path: "/api/messages/{S}/forward",
    body: { fromJid: JID, messageId: "m1", toJids: [JID] },
  },
  { method: "GET", path: "/api/messages/{S}/search?q=hi" },
  { method: "GET", path: "/api/messages/{S}/download/m1/media" },
  { method: "GET", path: "/api/messages/{S}/download/m1/media/link" },
  // The link is the credential: a forged one is refused before any session is looked up.
  { method: "GET", path: "/api/media/{S}/m1?expires=1&signature=forged", status: 403 },
  { method: "GET", path: "/api/chat/{S}" },
  { method: "GET", path: `/api/chat/{S}/${JID}` },
  { method: "POST", path: "/api/chat/{S}/check", body: { numbers: ["628123456789"] } },
  { method: "PUT", path: `/api/chat/{S}/${JID}/read`, body: {} },
  { method: "PUT", path: `/api/chat/{S}/${JID}/archive`, body: { archive: true } },
  { method: "PUT", path: `/api/chat/{S}/${JID}/pin`, body: { pin: true } },
  { method: "PUT", path: `/api/chat/{S}/${JID}/mute`, body: { mute: true } },
  { method: "POST", path: `/api/chat/{S}/${JID}/presence`, body: { presence: "composing" } },
  { method: "POST", path: `/api/chat/{S}/${JID}/presence/subscribe` },
  { method: "POST", path: `/api/chat/{S}/${JID}/profile-picture` },
  { method: "GET", path: "/api/contacts/{S}" },
  { method: "POST", path: `/api/contacts/{S}/${JID}/block` },
  { method: "POST", path: `/api/contacts/{S}/${JID}/unblock` },
  { method: "GET", path: "/api/groups/{S}" },
  { method: "POST", path: "/api/groups/{S}/create", body: { subject: "g", participants: [JID] } },
  { method: "POST", path: "/api/groups/{S}/invite/accept", body: { inviteCode: "AbCdEfGhIjK" } },
  { method: "GET", path: `/api/groups/{S}/${GROUP}` },
  { method: "POST", path: `/api/groups/{S}/${GROUP}/leave` },
  { method: "PUT", path: `/api/groups/{S}/${GROUP}/subject`, body: { subject: "s" } },
  { method: "PUT", path: `/api/groups/{S}/${GROUP}/description`, body: { description: "d" } },
  {
    method: "PUT",
    path: `/api/groups/{S}/${GROUP}/members`,
    body: { action: "add", participants: [JID] },
  },
  { method: "GET", path: `/api/groups/{S}/${GROUP}/invite` },
  { method: "PUT", path: `/api/groups/{S}/${GROUP}/invite` },
  { method: "PUT", path: `/api/groups/{S}/${GROUP}/settings`, body: { setting: "announcement" } },
  { method: "PUT", path: `/api/groups/{S}/${GROUP}/ephemeral`, body: { expiration: 0 } },
  { method: "PUT", path: `/api/groups/{S}/${GROUP}/picture`, form: true },
  { method: "DELETE", path: `/api/groups/{S}/${GROUP}/picture` },
  { method: "GET", path: "/api/labels/{S}" },
  { method: "POST", path: "/api/labels/{S}", body: { name: "l" } },
  { method: "GET", path: `/api/labels/{S}/chat/${JID}/labels` },
  { method: "PUT", path: `/api/labels/{S}/chat/${JID}/labels`, body: { labelIds: ["1"], action: "add" } },
  { method: "PUT", path: "/api/labels/{S}/1", body: { name: "l" } },
  { method: "DELETE", path: "/api/labels/{S}/1" },
  { method: "GET", path: "/api/chats/{S}/by-label/1" },
  { method: "GET", path: "/api/profile/{S}" },
  { method: "PUT", path: "/api/profile/{S}/name", body: { name: "n" } },
  { method: "PUT", path: "/api/profile/{S}/status", body: { status: "s" } },
  { method: "PUT", path: "/api/profile/{S}/picture", form: true },
  { method: "DELETE", path: "/api/profile/{S}/picture" },
  { method: "POST", path: "/api/status/{S}/update", body: { content: "hi" } },
  { method: "GET", path: "/api/scheduler/{S}" },
  {
    method: "POST",
    path: "/api/scheduler/{S}",
    body: { jid: JID, content: "hi", sendAt: "2099-01-01T00:00Z" },
  },
  { method: "GET", path: "/api/scheduler/{S}/x1" },
  { method: "PUT", path: "/api/scheduler/{S}/x1", body: { content: "hi" } },
  { method: "DELETE", path: "/api/scheduler/{S}/x1" },
  { method: "GET", path: "/api/autoreplies/{S}" },
  { method: "POST", path: "/api/autoreplies/{S}", body: { keyword: "hi", response: "hello" } },
  { method: "PUT", path: "/api/autoreplies/{S}/r1", body: { response: "hello" } },
  { method: "DELETE", path: "/api/autoreplies/{S}/r1" },
  { method: "GET", path: "/api/webhooks/{S}" },
  {
    method: "POST",
    path: "/api/webhooks/{S}",
    body: { name: "w", url: "https://hooks.example.test/in", events: ["message.received"] },
  },
  { method: "PUT", path: "/api/webhooks/{S}/w1", body: { name: "w" } },
  { method: "DELETE", path: "/api/webhooks/{S}/w1" },
  { method: "POST", path: "/api/webhooks/{S}/w1/test" },
  { method: "GET", path: "/api/webhooks/{S}/w1/deliveries" },
  { method: "POST", path: "/api/webhooks/{S}/w1/deliveries/d1/redeliver" },
];

/** `/api/chat/{sessionId}/{jid}/read` → `PUT /api/chat/{}/{}/read`: the shape, to match against the table. */
const shapeOf = (method: string, path: string) =>
  `${method.toUpperCase()} ${path.split("?")[0]?.replace(/\{[^}]+\}/g, "{}")}`;

const probeShape = (probe: Probe) =>
  shapeOf(
    probe.method,
    probe.path
      .replace(SESSION, "{}")
      .replaceAll(JID, "{}")
      .replaceAll(GROUP, "{}")
      .replace(/\/(m1|b1|x1|r1|w1|d1|1)(?=\/|\?|$)/g, "/{}")
      .replace(/\/(start|logout|pair)$/, "/{}"),
  );

async function probe(key: string, entry: Probe, sessionId: string) {
  const path = entry.path.replace(SESSION, sessionId);
  if (entry.form) {
    const form = new FormData();
    form.set("file", new File([new Uint8Array([0xff, 0xd8, 0xff])], "a.jpg", { type: "image/jpeg" }));
    const res = await fetchWorker(`${BASE}${path}`, {
      method: entry.method,
      headers: asKey(key),
      body: form,
    });
    return { status: res.status, body: await res.json() };
  }
  const res = await call(entry.method, path, { headers: asKey(key), body: entry.body });
  return { status: res.status, body: res.body };
}

describe("session ids are not probeable", () => {
  it("the table names every operation of the API that takes a session id", () => {
    const documented = Object.entries(openapi.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => ({ method, path })))
      .filter(({ path }) => path.includes("{sessionId}") || path.startsWith("/api/sessions/{id}"))
      .map(({ method, path }) => shapeOf(method, path));
    const probed = new Set(PROBES.map(probeShape));
    expect(documented.filter((shape) => !probed.has(shape))).toEqual([]);
  });

  it("answers another user's session id exactly as a nonexistent one (404) on every route", async () => {
    const alice = await ownedSession("not yours");
    const mallory = await createUser("OWNER");
    const malloryKey = await generateKey(mallory);
    const differing: string[] = [];
    for (const entry of PROBES) {
      const theirs = await probe(malloryKey, entry, alice.slug);
      const none = await probe(malloryKey, entry, "no-such-session");
      if (theirs.status !== (entry.status ?? 404) || JSON.stringify(theirs) !== JSON.stringify(none))
        differing.push(
          `${entry.method} ${entry.path}: ${theirs.status} vs ${none.status} ${JSON.stringify(theirs.body)}`,
        );
    }
    expect(differing).toEqual([]);
    // And by internal id, too.
    const byId = await call("GET", `/api/sessions/${alice.id}`, { headers: asKey(malloryKey) });
    expect(byId).toMatchObject({ status: 404, body: { message: "Session not found" } });
    // Nothing changed on Alice's session.
    const mine = await call<{ data: { state: string } }>("GET", `/api/sessions/${alice.slug}`, {
      headers: asKey(alice.key),
    });
    expect(mine.body.data.state).toBe("stopped");
  });

  it("the live-state socket answers 404 for another user's session, as for none", async () => {
    const alice = await ownedSession("watched by no one");
    const mallory = await generateKey(await createUser("OWNER"));
    const watch = (slug: string) =>
      fetchWorker(`${BASE}/api/sessions/${slug}/events`, {
        headers: { Upgrade: "websocket", ...asKey(mallory) },
      });
    const theirs = await watch(alice.slug);
    const none = await watch("no-such-session");
    expect(theirs.status).toBe(404);
    expect(await theirs.text()).toBe(await none.text());
  });

  it("dashboard pages of another user's session look like those of a missing one", async () => {
    const alice = await ownedSession("dashboard probe");
    const mallory = await createUser("OWNER");
    const pages = ["", "/pair", "/webhooks/w1"];
    for (const page of pages) {
      const theirs = await browse(mallory, `/sessions/${alice.slug}${page}`);
      const none = await browse(mallory, `/sessions/no-such-session${page}`);
      expect(theirs.status, page).toBe(404);
      expect(textOf(theirs.html).replaceAll(alice.slug, "ID")).toBe(
        textOf(none.html).replaceAll("no-such-session", "ID"),
      );
    }
    for (const action of ["start", "delete"]) {
      const theirs = await submit(mallory, `/sessions/${alice.slug}/${action}`);
      expect(theirs.status, action).toBe(404);
    }
  });

  it("a viewer, who may read the session, still learns that a write needs an operator (403)", async () => {
    const alice = await ownedSession("shared to read");
    const viewer = await createUser("OWNER");
    const share = await call("POST", `/api/sessions/${alice.slug}/access`, {
      headers: asKey(alice.key),
      body: { email: viewer.email, role: "viewer" },
    });
    expect(share.status).toBe(201);
    const viewerKey = await generateKey(viewer);
    expect((await call("GET", `/api/sessions/${alice.slug}`, { headers: asKey(viewerKey) })).status).toBe(
      200,
    );
    const write = await call("PATCH", `/api/sessions/${alice.slug}/settings`, {
      headers: asKey(viewerKey),
      body: { config: { rejectCalls: true } },
    });
    expect(write.status).toBe(403);
  });
});
