// The dashboard's webhook pages: add (from the session page), the webhook page with its live delivery
// log, redelivery, test event, pause and delete. Outbound deliveries go to a recording fake receiver.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { connect } from "../connected-session";
import { emit } from "../fake-bridge";
import { asSession, call, count, createUser, generateKey, type Session } from "../helpers";
import { browse, fieldError, type PageResponse, submit, textOf } from "./helpers";

type Envelope<T> = { status: boolean; data: T };
type Hook = {
  id: string;
  name: string;
  url: string;
  events: string[];
  isActive: boolean;
  secretSet: boolean;
};

const RECEIVER = "https://hooks.example.com";
const received: string[] = [];
const realFetch = globalThis.fetch;

/** hooks.example.com accepts everything (202) but `/down`, which fails (503); the rest is the network. */
beforeAll(() => {
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (!request.url.startsWith(RECEIVER)) return realFetch(input, init);
    received.push(request.url);
    return new Response("ok", { status: request.url.endsWith("/down") ? 503 : 202 });
  });
});
afterAll(() => {
  vi.restoreAllMocks();
});

async function follow(viewer: Session, res: PageResponse): Promise<PageResponse> {
  expect(res.status, res.html.slice(0, 500)).toBe(303);
  const flash = (res.headers.get("set-cookie") ?? "").match(/dashboard\.flash=[^;]*/)?.[0];
  return browse(
    { ...viewer, cookie: flash ? `${viewer.cookie}; ${flash}` : viewer.cookie },
    res.location ?? "/",
  );
}

const flashOf = (html: string) => html.match(/<p class="flash" role="status">([\s\S]*?)<\/p>/)?.[1] ?? null;

async function newSession(viewer: Session): Promise<{ id: string; slug: string }> {
  const res = await call<Envelope<{ id: string; sessionId: string }>>("POST", "/api/sessions", {
    body: { name: "Hooked" },
    headers: asSession(viewer),
  });
  expect(res.status).toBe(200);
  return { id: res.body.data.id, slug: res.body.data.sessionId };
}

async function hooksOf(viewer: Session, slug: string): Promise<Hook[]> {
  const res = await call<Envelope<Hook[]>>("GET", `/api/webhooks/${slug}`, { headers: asSession(viewer) });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Adds a webhook through the session page's form with a secret of our own (so it redirects). */
async function addHook(viewer: Session, slug: string, url: string, events = ["message.received"]) {
  const fields: Record<string, string> = { name: "CRM", url, secret: "my-own-secret-1" };
  for (const event of events) fields[`events:${event}`] = "on";
  const res = await submit(viewer, `/sessions/${slug}/webhooks`, fields);
  expect(res.status, res.html.slice(0, 300)).toBe(303);
  const hook = (await hooksOf(viewer, slug)).find((h) => h.url === url);
  if (!hook) throw new Error("webhook not created");
  return { res, hook };
}

const deliveryRegion = (html: string) =>
  html.match(/<div id="deliveries-live" data-live="3">([\s\S]*?)<\/section>/)?.[1] ?? "";

describe("adding a webhook from the session page", () => {
  it("shows a generated secret once with the confirmation, and lists the webhook by its URL", async () => {
    const viewer = await createUser("OWNER");
    const { slug } = await newSession(viewer);
    const url = `${RECEIVER}/generated`;
    // What the page offers by default: a name and "All events" already filled in.
    const form = await browse(viewer, `/sessions/${slug}`);
    expect(form.html).toContain('name="name" type="text" value="Webhook"');
    expect(form.html).toMatch(/name="events:\*" value="on" checked/);
    const res = await submit(viewer, `/sessions/${slug}/webhooks`, {
      name: "Webhook",
      url,
      "events:*": "on",
    });
    expect(res.status).toBe(200);
    expect(flashOf(res.html)).toBe("Webhook added");
    const secret =
      res.html.match(/id="webhook-secret" class="secret" readonly="" value="([^"]+)"/)?.[1] ?? "";
    expect(secret).toMatch(/^whsec_/);
    const [hook] = await hooksOf(viewer, slug);
    expect(hook).toMatchObject({ name: "Webhook", url, events: ["*"], isActive: true, secretSet: true });
    expect(res.html).toContain(`href="/sessions/${slug}/webhooks/${hook?.id}">${url}</a>`);
    // Shown once: the session page does not have it any more.
    expect((await browse(viewer, `/sessions/${slug}`)).html).not.toContain(secret);
  });

  it("redirects with a flash when the secret is the user's own", async () => {
    const viewer = await createUser("OWNER");
    const { slug } = await newSession(viewer);
    const { res, hook } = await addHook(viewer, slug, `${RECEIVER}/own`, [
      "message.received",
      "message.sent",
    ]);
    expect(res.location).toBe(`/sessions/${slug}`);
    expect(flashOf((await follow(viewer, res)).html)).toBe("Webhook added");
    expect(hook.events).toEqual(["message.received", "message.sent"]);
  });

  it("shows each message next to its field and writes nothing on bad input", async () => {
    const viewer = await createUser("OWNER");
    const { slug } = await newSession(viewer);
    const before = await count("webhooks");
    const empty = await submit(viewer, `/sessions/${slug}/webhooks`, { name: "", url: "" });
    expect(empty.status).toBe(400);
    expect(fieldError(empty.html, "name")).toBe("name is required");
    expect(fieldError(empty.html, "url")).toBe("url is required");
    expect(fieldError(empty.html, "events")).toBe("at least one event is required");

    const privateTarget = await submit(viewer, `/sessions/${slug}/webhooks`, {
      name: "Inside",
      url: "http://10.0.0.1/hook",
      "events:message.sent": "on",
      secret: "my-own-secret-1",
    });
    expect(privateTarget.status).toBe(400);
    expect(fieldError(privateTarget.html, "url")).toBe("10.0.0.1 is a private address");
    expect(privateTarget.html).toContain('value="http://10.0.0.1/hook"');
    expect(privateTarget.html).toMatch(/name="events:message.sent" value="on" checked/);
    expect(privateTarget.html).not.toContain("my-own-secret-1");

    const shortSecret = await submit(viewer, `/sessions/${slug}/webhooks`, {
      name: "Short",
      url: `${RECEIVER}/short`,
      "events:*": "on",
      secret: "short",
    });
    expect(fieldError(shortSecret.html, "secret")).toMatch(/>=8 characters/);
    expect(await count("webhooks")).toBe(before);
  });
});

describe("webhook page", () => {
  it("shows the delivery log live and redelivers an entry", async () => {
    const viewer = await createUser("OWNER");
    const session = await newSession(viewer);
    const { hook } = await addHook(viewer, session.slug, `${RECEIVER}/log`);
    const s = await connect(
      { ...session, key: await generateKey(viewer), userId: viewer.userId },
      "15550001111@s.whatsapp.net",
    );
    const peer = "15550002222@s.whatsapp.net";
    await emit(s.link, 1, 2, {
      kind: "message",
      live: true,
      message: {
        id: "IN-1",
        chat: peer,
        sender: peer,
        fromMe: false,
        pushName: "Peer",
        timestamp: Date.now(),
        content: { type: "text", text: "hi" },
      },
    });
    const path = `/sessions/${session.slug}/webhooks/${hook.id}`;
    let page = await browse(viewer, path);
    for (let i = 0; i < 40 && !textOf(deliveryRegion(page.html)).includes("delivered"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      page = await browse(viewer, path);
    }
    expect(page.status).toBe(200);
    const log = deliveryRegion(page.html);
    expect(textOf(log)).toMatch(/message\.received delivered 1 HTTP 202/);
    expect(received).toContain(`${RECEIVER}/log`);

    const redeliver = log.match(/action="([^"]+\/redeliver)"/)?.[1] ?? "";
    expect(redeliver).toMatch(new RegExp(`^${path}/deliveries/[^/]+/redeliver$`));
    const queued = await submit(viewer, redeliver);
    expect(queued.location).toBe(path);
    expect(flashOf((await follow(viewer, queued)).html)).toBe("Redelivery queued");

    const missing = await submit(viewer, `${path}/deliveries/no-such-delivery/redeliver`);
    expect(missing.status).toBe(404);
    expect(textOf(missing.html)).toContain("Delivery log");
    expect(missing.html).toMatch(/<p class="alert" role="alert">[^<]+<\/p>/);
  });

  it("sends a test event and reports how it went", async () => {
    const viewer = await createUser("OWNER");
    const { slug } = await newSession(viewer);
    const { hook } = await addHook(viewer, slug, `${RECEIVER}/test`);
    const good = await submit(viewer, `/sessions/${slug}/webhooks/${hook.id}/test`);
    expect(flashOf((await follow(viewer, good)).html)).toMatch(/^Test event delivered: HTTP 202 in \d+ ms$/);
    expect(received).toContain(`${RECEIVER}/test`);

    const { hook: down } = await addHook(viewer, slug, `${RECEIVER}/down`);
    const bad = await submit(viewer, `/sessions/${slug}/webhooks/${down.id}/test`);
    expect(flashOf((await follow(viewer, bad)).html)).toMatch(/^Test event failed: .*503/);
  });

  it("pauses, resumes and deletes the webhook", async () => {
    const viewer = await createUser("OWNER");
    const { slug } = await newSession(viewer);
    const { hook } = await addHook(viewer, slug, `${RECEIVER}/pause`);
    const path = `/sessions/${slug}/webhooks/${hook.id}`;
    const page = await browse(viewer, path);
    expect(textOf(page.html)).toContain(`URL ${RECEIVER}/pause Events message.received Active Yes`);

    const paused = await submit(viewer, `${path}/active`, { isActive: "false" });
    expect(flashOf((await follow(viewer, paused)).html)).toBe("Deliveries paused");
    expect((await hooksOf(viewer, slug))[0]?.isActive).toBe(false);
    const resumed = await submit(viewer, `${path}/active`, { isActive: "true" });
    expect(flashOf((await follow(viewer, resumed)).html)).toBe("Deliveries resumed");
    expect((await hooksOf(viewer, slug))[0]?.isActive).toBe(true);

    const before = await count("webhooks");
    const deleted = await submit(viewer, `${path}/delete`);
    expect(deleted.location).toBe(`/sessions/${slug}`);
    expect(flashOf((await follow(viewer, deleted)).html)).toBe("Webhook deleted");
    expect(await hooksOf(viewer, slug)).toEqual([]);
    expect(await count("webhooks")).toBe(before - 1);
  });

  it("shows another user's webhook as the API's error page and changes nothing", async () => {
    const alice = await createUser("OWNER");
    const mallory = await createUser("OWNER");
    const { slug } = await newSession(alice);
    const { hook } = await addHook(alice, slug, `${RECEIVER}/private`);
    const path = `/sessions/${slug}/webhooks/${hook.id}`;
    expect((await browse(mallory, path)).status).toBe(404);
    expect((await submit(mallory, `${path}/delete`)).status).toBe(404);
    const added = await submit(mallory, `/sessions/${slug}/webhooks`, {
      name: "x",
      url: `${RECEIVER}/m`,
      "events:*": "on",
    });
    expect(added.status).toBe(404);
    expect(await hooksOf(alice, slug)).toHaveLength(1);
    expect((await browse(alice, `/sessions/${slug}/webhooks/no-such-hook`)).status).toBe(404);
  });
});
