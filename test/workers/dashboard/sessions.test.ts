// The dashboard's session pages: list and create, detail with actions, settings, bot config, the test
// message, and the pairing page (QR, connected, pairing code), through the dashboard's URLs.
import { afterEach, describe, expect, it } from "vitest";
import { connect, type OwnedSession } from "../connected-session";
import { answerSend, emit, FakeBridge, type Link, QR_IMAGE, sendCommand } from "../fake-bridge";
import { asSession, call, count, createUser, generateKey, type Session } from "../helpers";
import { browse, fieldError, formError, type PageResponse, submit, textOf } from "./helpers";

type Envelope<T> = { status: boolean; data: T };
type Viewer = Session & { email: string };
type SessionView = { id: string; sessionId: string; state: string; status: string; messageCount: number };

/** The viewer's cookie plus the flash cookie a 303 set, as the browser sends them on the next GET. */
async function follow(viewer: Session, res: PageResponse): Promise<PageResponse> {
  expect(res.status, res.html.slice(0, 500)).toBe(303);
  const flash = (res.headers.get("set-cookie") ?? "").match(/dashboard\.flash=[^;]*/)?.[0];
  return browse(
    { ...viewer, cookie: flash ? `${viewer.cookie}; ${flash}` : viewer.cookie },
    res.location ?? "/",
  );
}

const flashOf = (html: string) => html.match(/<p class="flash" role="status">([\s\S]*?)<\/p>/)?.[1] ?? null;

async function apiSession(viewer: Session, slug: string) {
  return call<Envelope<SessionView>>("GET", `/api/sessions/${slug}`, { headers: asSession(viewer) });
}

/** A session of `viewer`, created through the API (stopped). */
async function newSession(viewer: Session, name = "Desk"): Promise<OwnedSession> {
  const res = await call<Envelope<{ id: string; sessionId: string }>>("POST", "/api/sessions", {
    body: { name },
    headers: asSession(viewer),
  });
  expect(res.status).toBe(200);
  return { key: "", userId: viewer.userId, id: res.body.data.id, slug: res.body.data.sessionId };
}

/** `viewer`'s session held by a fake bridge and connected as `me`. */
async function connectedFor(viewer: Session, me: string) {
  const owned = await newSession(viewer, "Connected desk");
  return connect({ ...owned, key: await generateKey(viewer) }, me);
}

const bridges: FakeBridge[] = [];
afterEach(() => {
  for (const bridge of bridges.splice(0)) bridge.fleet.socket.close(1001, "test done");
});

/** `viewer`'s session started on a fake bridge that reports a QR code (state scan_qr). */
async function showingQr(viewer: Session): Promise<OwnedSession & { link: Link }> {
  const owned = await newSession(viewer, "Pairing desk");
  const bridge = await new FakeBridge().connect();
  bridges.push(bridge);
  const started = await call("POST", `/api/sessions/${owned.slug}/start`, { headers: asSession(viewer) });
  expect(started.status).toBe(200);
  await bridge.waitForAssign(owned.id);
  const held = await bridge.hold(owned.id);
  if (!("link" in held)) throw new Error(`hold failed: ${held.status}`);
  await emit(held.link, 1, 1, { kind: "qr", qr: "qr-text", image: QR_IMAGE });
  return { ...owned, link: held.link };
}

const owner = (): Promise<Viewer> => createUser("OWNER");

describe("sessions list and create", () => {
  it("creates a session, starts it and opens its pairing page with a flash", async () => {
    const viewer = await owner();
    const slug = `desk-${crypto.randomUUID().slice(0, 8)}`;
    const res = await submit(viewer, "/sessions", { name: "Front desk", sessionId: slug });
    expect(res.location).toBe(`/sessions/${slug}/pair`);
    const pair = await follow(viewer, res);
    expect(pair.status).toBe(200);
    expect(flashOf(pair.html)).toBe("Session created");
    expect(pair.html).toContain(`data-session-watch="/api/sessions/${slug}/events"`);

    const created = await apiSession(viewer, slug);
    expect(created.status).toBe(200);
    // Started: with no bridge online it waits in `starting` rather than resting in `stopped`.
    expect(created.body.data.state).toBe("starting");

    const list = await browse(viewer, "/sessions");
    expect(list.status).toBe(200);
    const live = list.html.match(/<div id="sessions-live" data-live="3">([\s\S]*?)<\/table>/)?.[1] ?? "";
    expect(live).toContain(`href="/sessions/${slug}"`);
    expect(textOf(live)).toContain("Front desk");
    expect(textOf(live)).toContain("Connecting");
  });

  it("shows the API's message next to the field and writes nothing on bad input", async () => {
    const viewer = await owner();
    const existing = await newSession(viewer);
    const before = await count("sessions");

    const empty = await submit(viewer, "/sessions", { name: "  ", sessionId: "" });
    expect(empty.status).toBe(400);
    expect(fieldError(empty.html, "name")).toMatch(/>=1 characters/);
    expect(empty.html).toContain('aria-invalid="true"');

    const badSlug = await submit(viewer, "/sessions", { name: "Desk", sessionId: "has spaces" });
    expect(badSlug.status).toBe(400);
    expect(fieldError(badSlug.html, "sessionId")).toBe("Use 1-64 letters, digits, '-' or '_'");

    const duplicate = await submit(viewer, "/sessions", { name: "Again", sessionId: existing.slug });
    expect(duplicate.status).toBe(409);
    expect(fieldError(duplicate.html, "sessionId")).toBe("This sessionId is already in use");
    expect(duplicate.html).toContain('value="Again"');
    expect(await count("sessions")).toBe(before);
  });

  it("shows another user's session as the API's 404 error page, as a missing one, and changes nothing", async () => {
    const alice = await owner();
    const mallory = await owner();
    const session = await newSession(alice);
    for (const path of [`/sessions/${session.slug}`, `/sessions/${session.slug}/pair`]) {
      const page = await browse(mallory, path);
      expect(page.status).toBe(404);
      expect(textOf(page.html)).toContain("Session not found");
    }
    const start = await submit(mallory, `/sessions/${session.slug}/start`);
    expect(start.status).toBe(404);
    const deleting = await submit(mallory, `/sessions/${session.slug}/delete`);
    expect(deleting.status).toBe(404);
    expect((await apiSession(alice, session.slug)).body.data.state).toBe("stopped");
    expect((await browse(mallory, "/sessions/no-such-session")).status).toBe(404);
  });
});

describe("session detail", () => {
  it("shows the facts, the actions and every form", async () => {
    const viewer = await owner();
    const session = await newSession(viewer, "Support line");
    const page = await browse(viewer, `/sessions/${session.slug}`);
    expect(page.status).toBe(200);
    const text = textOf(page.html);
    expect(text).toContain("Support line");
    expect(text).toContain("State stopped");
    expect(text).toContain("No phone linked");
    for (const button of [
      "Start",
      "Stop",
      "Restart",
      "Log out",
      "Delete",
      "Send test message",
      "Add webhook",
    ])
      expect(page.html).toContain(`>${button}</button>`);
    expect(page.html).toContain(`href="/sessions/${session.slug}/pair">Pair a phone</a>`);
    expect(page.html).toContain('<div id="session-facts" data-live="3">');
    // The send form's "Message" is the only label a reader finds by that word.
    const labels = [...page.html.matchAll(/<label[^>]*>([\s\S]*?)<\/label>/g)].map((m) => textOf(m[1] ?? ""));
    expect(labels.filter((label) => /message/i.test(label))).toEqual(["Message"]);
    expect(page.html).not.toMatch(/aria-label="[^"]*message/i);
  });

  it("stops, logs out and deletes through the buttons, each with a flash", async () => {
    const viewer = await owner();
    const session = await newSession(viewer);
    const started = await submit(viewer, `/sessions/${session.slug}/start`);
    expect(flashOf((await follow(viewer, started)).html)).toBe("Session starting");
    expect((await apiSession(viewer, session.slug)).body.data.state).toBe("starting");

    const stopped = await submit(viewer, `/sessions/${session.slug}/stop`);
    expect(started.location).toBe(`/sessions/${session.slug}`);
    expect(flashOf((await follow(viewer, stopped)).html)).toBe("Session stopped");
    expect((await apiSession(viewer, session.slug)).body.data.state).toBe("stopped");

    const loggedOut = await submit(viewer, `/sessions/${session.slug}/logout`);
    expect(flashOf((await follow(viewer, loggedOut)).html)).toBe("Session logged out");
    expect((await apiSession(viewer, session.slug)).body.data.state).toBe("logged_out");

    const before = await count("sessions");
    const deleted = await submit(viewer, `/sessions/${session.slug}/delete`);
    expect(deleted.location).toBe("/sessions");
    expect(flashOf((await follow(viewer, deleted)).html)).toBe("Session deleted");
    expect((await apiSession(viewer, session.slug)).status).toBe(404);
    expect(await count("sessions")).toBe(before - 1);
  });

  it("saves the settings checkboxes, and refuses a value that is not a boolean", async () => {
    const viewer = await owner();
    const session = await newSession(viewer);
    const settingsOf = async () =>
      (
        await call<Envelope<{ config: Record<string, boolean> }>>(
          "GET",
          `/api/sessions/${session.slug}/settings`,
          {
            headers: asSession(viewer),
          },
        )
      ).body.data.config;
    const saved = await submit(viewer, `/sessions/${session.slug}/settings`, {
      readReceipts: "on",
      alwaysOnline: "on",
    });
    expect(flashOf((await follow(viewer, saved)).html)).toBe("Settings saved");
    const config = await settingsOf();
    expect(config).toMatchObject({
      readReceipts: true,
      rejectCalls: false,
      antiDelete: false,
      alwaysOnline: true,
    });

    const bad = await submit(viewer, `/sessions/${session.slug}/settings`, { rejectCalls: "maybe" });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.html, "rejectCalls")).toMatch(/expected boolean/);
    expect(await settingsOf()).toEqual(config);
  });

  it("saves the bot config, and shows a bad prefix or JID next to its field without writing", async () => {
    const viewer = await owner();
    const session = await newSession(viewer);
    const botConfig = async () =>
      (
        await call<Envelope<Record<string, unknown>>>("GET", `/api/sessions/${session.slug}/bot-config`, {
          headers: asSession(viewer),
        })
      ).body.data;
    const fields = {
      enabled: "on",
      botName: "Helper",
      prefix: "!",
      botMode: "SPECIFIC",
      autoReplyMode: "ALL",
      botAllowedJids: "628111000111@s.whatsapp.net\n628222000222@s.whatsapp.net",
      botBlockedJids: "",
      autoReplyAllowedJids: "",
      autoReplyBlockedJids: "",
      enablePing: "on",
      maxStickerDuration: "15",
      removeBgApiKey: "rb-key-1234",
    };
    const saved = await submit(viewer, `/sessions/${session.slug}/bot-config`, fields);
    const after = await follow(viewer, saved);
    expect(flashOf(after.html)).toBe("Bot config saved");
    expect(await botConfig()).toMatchObject({
      enabled: true,
      botName: "Helper",
      prefix: "!",
      botMode: "SPECIFIC",
      botAllowedJids: ["628111000111@s.whatsapp.net", "628222000222@s.whatsapp.net"],
      enableSticker: false,
      enablePing: true,
      maxStickerDuration: 15,
      removeBgApiKey: "****",
      removeBgApiKeySet: true,
    });
    expect(after.html).not.toContain("rb-key-1234");
    expect(after.html).not.toContain("****1234");
    expect(textOf(after.html)).toContain("A key is saved (encrypted; not shown)");

    const rows = await count("bot_configs");
    const badPrefix = await submit(viewer, `/sessions/${session.slug}/bot-config`, {
      ...fields,
      prefix: "toolong",
    });
    expect(badPrefix.status).toBe(400);
    expect(fieldError(badPrefix.html, "prefix")).toMatch(/<=5 characters/);
    expect(badPrefix.html).toContain('value="toolong"');
    expect(badPrefix.html).not.toContain("rb-key-1234");
    const badJid = await submit(viewer, `/sessions/${session.slug}/bot-config`, {
      ...fields,
      botName: "Changed",
      botAllowedJids: "not-a-jid",
    });
    expect(badJid.status).toBe(400);
    expect(fieldError(badJid.html, "botAllowedJids")).toBe("Expected a JID like 628123456789@s.whatsapp.net");
    const badNumber = await submit(viewer, `/sessions/${session.slug}/bot-config`, {
      ...fields,
      maxStickerDuration: "ten",
    });
    expect(fieldError(badNumber.html, "maxStickerDuration")).toMatch(/expected number/);
    expect(await count("bot_configs")).toBe(rows);
    expect(await botConfig()).toMatchObject({ botName: "Helper", prefix: "!", maxStickerDuration: 15 });
  });
});

describe("send a test message", () => {
  it("says the session is not connected, and puts a bad number or empty text next to its field", async () => {
    const viewer = await owner();
    const session = await newSession(viewer);
    const notConnected = await submit(viewer, `/sessions/${session.slug}/send`, {
      to: "15550009876",
      text: "Hello",
    });
    expect(notConnected.status).toBe(503);
    expect(formError(notConnected.html)).toBe("Session not ready: WhatsApp is not connected");
    expect(notConnected.html).toContain('value="15550009876"');

    const badNumber = await submit(viewer, `/sessions/${session.slug}/send`, {
      to: "call me",
      text: "Hello",
    });
    expect(badNumber.status).toBe(400);
    expect(fieldError(badNumber.html, "to")).toMatch(/@s\.whatsapp\.net/);
    const noText = await submit(viewer, `/sessions/${session.slug}/send`, { to: "15550009876", text: "" });
    expect(noText.status).toBe(400);
    expect(fieldError(noText.html, "text")).toMatch(/>=1 characters/);
    expect((await apiSession(viewer, session.slug)).body.data.messageCount).toBe(0);
  });

  it("sends through the bridge to the number's JID and redirects with a flash", async () => {
    const viewer = await owner();
    const me = "15550001111@s.whatsapp.net";
    const s = await connectedFor(viewer, me);
    const sending = submit(viewer, `/sessions/${s.slug}/send`, {
      to: "+1 555-000-9876",
      text: "Hello there",
    });
    const command = await sendCommand(s.link);
    const args = command.args as { to: string; content: { type: string; text: string } };
    expect(args.to).toBe("15550009876@s.whatsapp.net");
    expect(args.content).toEqual({ type: "text", text: "Hello there" });
    answerSend(s.link, command, me);
    const res = await sending;
    expect(res.location).toBe(`/sessions/${s.slug}`);
    expect(flashOf((await follow(viewer, res)).html)).toBe("Message sent");
    expect((await apiSession(viewer, s.slug)).body.data.messageCount).toBe(1);
  });
});

describe("pairing page", () => {
  it("renders a connected session as connected, with who it is connected as", async () => {
    const viewer = await owner();
    const s = await connectedFor(viewer, "15550001111:1@s.whatsapp.net");
    const page = await browse(viewer, `/sessions/${s.slug}/pair`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('data-view="connected"');
    expect(textOf(page.html)).toContain("Connected as +15550001111");
    expect(page.html).not.toContain(">Start session</button>");
  });

  it("renders the current QR in the image before any script runs", async () => {
    const viewer = await owner();
    const s = await showingQr(viewer);
    const page = await browse(viewer, `/sessions/${s.slug}/pair`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('data-view="qr"');
    expect(page.html).toMatch(new RegExp(`<img data-qr[^>]* src="${QR_IMAGE.replace(/[+/.]/g, "\\$&")}"`));
    expect(textOf(page.html)).toContain("Open WhatsApp on your phone → Linked devices → Link a device");
  });

  it("offers to start a stopped session and returns to the pairing page", async () => {
    const viewer = await owner();
    const session = await newSession(viewer);
    const page = await browse(viewer, `/sessions/${session.slug}/pair`);
    expect(page.html).toContain('data-view="waiting"');
    expect(textOf(page.html)).toContain("Waiting for a QR code… Disconnected (stopped)");
    expect(page.html).toContain(`action="/sessions/${session.slug}/pair/start"`);
    const started = await submit(viewer, `/sessions/${session.slug}/pair/start`);
    expect(started.location).toBe(`/sessions/${session.slug}/pair`);
    expect(flashOf((await follow(viewer, started)).html)).toBe("Session starting");
    expect((await apiSession(viewer, session.slug)).body.data.state).toBe("starting");
  });

  it("shows the pairing code from the bridge, and a bad number next to the field", async () => {
    const viewer = await owner();
    const s = await showingQr(viewer);
    const bad = await submit(viewer, `/sessions/${s.slug}/pair-code`, { phoneNumber: "abc" });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.html, "phoneNumber")).toBe("Digits with country code, e.g. 628123456789");
    expect(bad.html).not.toContain('id="pairing-code"');

    const asking = submit(viewer, `/sessions/${s.slug}/pair-code`, { phoneNumber: "+62 812-3456-789" });
    const command = await s.link.next((f) => f.type === "command" && f.name === "pair");
    expect(command.args).toEqual({ phoneNumber: "628123456789" });
    s.link.send({ type: "result", epoch: 1, id: command.id, ok: true, data: { code: "ABCD1234" } });
    const res = await asking;
    expect(res.status).toBe(200);
    expect(res.html).toMatch(/<p id="pairing-code" class="pairing-code">ABCD1234<\/p>/);
    expect(res.headers.get("location")).toBeNull();
  });

  it("puts a failure that names no field (no bridge) next to the phone number", async () => {
    const viewer = await owner();
    const session = await newSession(viewer);
    const res = await submit(viewer, `/sessions/${session.slug}/pair-code`, { phoneNumber: "628123456789" });
    expect(res.status).toBe(503);
    expect(fieldError(res.html, "phoneNumber")).not.toBeNull();
  });
});
