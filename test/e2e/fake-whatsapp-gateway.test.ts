// `npm start` with real Baileys against the protocol-level fake WhatsApp, through the public API only:
// `alwaysOnline` shows the account online to WhatsApp (`<presence type="available">`, with the
// account's name) and offline when turned off; a status posted without `mentions` reaches the phone
// of a contact the session knows; the number check finds numbers WhatsApp normalises (a Brazilian
// mobile asked with its ninth digit, registered without it; a Mexican one asked with the `1`); and
// when WhatsApp retires the version the bridge announces, the session reads the current one from
// WhatsApp Web's sw.js and reconnects by itself. A session given a proxy reaches WhatsApp and the media
// host only through it (the proxy counts its tunnels); a dead proxy is a clear session error.
import { createHash } from "node:crypto";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import { PhoneDevice } from "../fake-whatsapp/history.ts";
import type { FakeWhatsApp, LinkedDevice } from "../fake-whatsapp/server.ts";
import type { ApiClient } from "../support/api.ts";
import { eventually } from "../support/api.ts";
import { type FakeWhatsAppStack, pairByQr, startFakeWhatsAppStack } from "../support/fake-whatsapp-stack.ts";
import type { Envelope } from "../support/messaging.ts";
import { startSocks5Proxy } from "../support/proxy-servers.ts";

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

const SID = `fakegw-${Math.random().toString(36).slice(2, 8)}`;
const PHONE = "4915550006666";
let device: LinkedDevice;

const setAlwaysOnline = async (alwaysOnline: boolean) =>
  (await api.call("PATCH", `/api/sessions/${SID}/settings`, { config: { alwaysOnline } })).status;

describe("gateway behaviour on real Baileys against the fake WhatsApp", () => {
  it("alwaysOnline: the account is shown online once connected, offline when turned off", async () => {
    expect((await api.call("POST", "/api/sessions", { name: SID, sessionId: SID })).status).toBe(200);
    expect(await setAlwaysOnline(true)).toBe(200);
    // The account's phone: on pairing it sends the history notification, stamped with the account's
    // name (which Baileys needs before it can send any presence).
    new PhoneDevice(whatsapp, PHONE, "Acme Support").sendHistoryOnPairing([]);
    device = await pairByQr(api, whatsapp, SID, PHONE);

    const online = await eventually(
      async () => whatsapp.presencesFrom(device.jid).find((presence) => presence.type === "available"),
      30_000,
      "presence available",
    );
    expect(online).toEqual({ type: "available", name: "Acme Support" });

    expect(await setAlwaysOnline(false)).toBe(200);
    await eventually(
      async () => (whatsapp.presencesFrom(device.jid).at(-1)?.type === "unavailable" ? true : undefined),
      30_000,
      "presence unavailable",
    );
  });

  it("a status without mentions reaches the phone of a contact the session knows", async () => {
    const contact = new FakeContact(whatsapp, "4915550002323", "Ines");
    await contact.sendText(device, "hello");
    await eventually(
      async () => {
        const res = await api.call("GET", `/api/contacts/${SID}`);
        return JSON.stringify(res.body).includes(contact.jid) ? true : undefined;
      },
      30_000,
      "the contact known to the session",
    );
    const posted = await api.call<Envelope<{ id: string; remoteJid: string }>>(
      "POST",
      `/api/status/${SID}/update`,
      { content: "Open till late" },
    );
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);
    const seen = await eventually(
      async () => contact.inbox.find((message) => message.id === posted.body.data.id),
      30_000,
      "the contact's phone receiving the status",
    );
    expect(seen).toMatchObject({ chat: "status@broadcast", text: "Open till late" });
    expect(contact.device.failures).toEqual([]);
  });

  it("the number check finds numbers WhatsApp normalises", async () => {
    const joao = new FakeContact(whatsapp, "551187654321", "João");
    const lupe = new FakeContact(whatsapp, "525512345678", "Lupe");
    const res = await api.call<Envelope<{ results: unknown[] }>>("POST", `/api/chat/${SID}/check`, {
      numbers: ["+55 11 98765-4321", "5215512345678", "5511912345678"],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.results).toEqual([
      { number: "+55 11 98765-4321", exists: true, jid: joao.jid },
      { number: "5215512345678", exists: true, jid: lupe.jid },
      { number: "5511912345678", exists: false, jid: null },
    ]);
  });

  it("WhatsApp retires the version: the session reads the current one and reconnects by itself", async () => {
    type Versioned = Envelope<{ state: string; waVersion: { version: string; source: string } | null }>;
    const detail = async () => (await api.call<Versioned>("GET", `/api/sessions/${SID}`)).body.data;
    const [major, minor, build] = whatsapp.clientVersions.at(-1) ?? [2, 3000, 0];
    // Read at the bridge's start in the background: "bundled" if the session opened before it answered.
    expect((await detail()).waVersion?.version).toBe(`${major}.${minor}.${build}`);

    // WhatsApp ships a new build and refuses the old one; nobody touches the bridge's configuration.
    const current: [number, number, number] = [major, minor, build + 11];
    world.web.ship(current[2]);
    whatsapp.requireVersion(current);
    expect((await api.call("POST", `/api/sessions/${SID}/restart`)).status).toBe(200);

    const reconnected = await eventually(
      async () => {
        const now = await detail();
        return now.state === "connected" && now.waVersion?.version === current.join(".") ? now : undefined;
      },
      60_000,
      "connected with the current version",
    );
    expect(reconnected.waVersion).toEqual({ version: current.join("."), source: "fetched" });
    expect(whatsapp.clientVersions.slice(-2)).toEqual([[major, minor, build], current]);
  });

  it("a proxy per session: WhatsApp and media go through it; a dead proxy is a clear session error", async () => {
    const proxy = await startSocks5Proxy({ username: "gw", password: "proxy-s3cret" });
    const dead = await startSocks5Proxy();
    await dead.close();
    try {
      const sid = `${SID}-proxied`;
      const portOf = (url: string) => Number(new URL(url).port);
      const through = (port: number) => proxy.tunnels.filter((tunnel) => tunnel.port === port).length;
      expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
      const set = await api.call<Envelope<{ proxy: string }>>("PUT", `/api/sessions/${sid}/proxy`, {
        url: proxy.url,
      });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      expect(set.body.data.proxy).toBe(`socks5://127.0.0.1:${portOf(proxy.url)}`);

      const proxiedDevice = await pairByQr(api, whatsapp, sid, "4915550006677");
      expect(through(portOf(whatsapp.url))).toBeGreaterThanOrEqual(1);

      // A contact's photo: the bridge downloads it from the media host, through the proxy too.
      const media = whatsapp.messaging.media;
      if (!media) throw new Error("the stack enables the media host");
      const photo = await sharp({ create: { width: 12, height: 12, channels: 3, background: "#0a0" } })
        .jpeg()
        .toBuffer();
      const sent = await new FakeContact(whatsapp, "4915550002424", "Pia").sendImage(
        proxiedDevice,
        photo,
        "via",
      );
      const download = await eventually(
        async () => {
          const res = await fetch(`${world.stack.baseUrl}/api/messages/${sid}/download/${sent.id}/media`, {
            headers: { "X-API-Key": api.key },
          });
          return res.status === 200 ? Buffer.from(await res.arrayBuffer()) : undefined;
        },
        30_000,
        "the photo downloaded through the proxy",
      );
      expect(createHash("sha256").update(download).digest("hex")).toBe(
        createHash("sha256").update(photo).digest("hex"),
      );
      expect(through(portOf(media.origin))).toBeGreaterThanOrEqual(1);

      // The proxy dies (another address, nothing listening): the session says so, and never goes direct.
      const direct = whatsapp.connectionsAccepted;
      const tunnels = proxy.tunnels.length;
      expect((await api.call("PUT", `/api/sessions/${sid}/proxy`, { url: dead.url })).status).toBe(200);
      const failed = await eventually(
        async () => {
          const res = await api.call<Envelope<{ state: string; lastDisconnect: string | null }>>(
            "GET",
            `/api/sessions/${sid}`,
          );
          return res.body.data.state === "network_error" ? res.body.data : undefined;
        },
        60_000,
        "network_error naming the proxy",
      );
      expect(failed.lastDisconnect).toContain(`proxy ${dead.url} could not be used (ECONNREFUSED)`);
      expect(JSON.stringify(failed)).not.toContain("proxy-s3cret");
      expect(whatsapp.connectionsAccepted).toBe(direct);
      expect(proxy.tunnels.length).toBe(tunnels);
    } finally {
      await proxy.close();
    }
  }, 180_000);

  it("send pacing: WhatsApp sees 'typing…' in the chat before each message the API sends", async () => {
    const tess = new FakeContact(whatsapp, "4915550002525", "Tess");
    const settings = (config: object) => api.call("PATCH", `/api/sessions/${SID}/settings`, { config });
    expect((await settings({ typingMs: 300, sendGapMs: 500 })).status).toBe(200);
    try {
      const ids: string[] = [];
      for (const text of ["on my way", "five minutes"]) {
        const sent = await api.call<Envelope<{ id: string }>>(
          "POST",
          `/api/messages/${SID}/${encodeURIComponent(tess.jid)}/send`,
          { message: { text } },
        );
        expect(sent.status, JSON.stringify(sent.body)).toBe(200);
        ids.push(sent.body.data.id);
      }
      await eventually(
        async () => (ids.every((id) => tess.inbox.some((message) => message.id === id)) ? true : undefined),
        30_000,
        "both messages on Tess's phone",
      );
      const toTess = whatsapp.received
        .filter(
          ({ node }) => node.attrs.to === tess.jid && (node.tag === "chatstate" || node.tag === "message"),
        )
        .map(({ node }) =>
          node.tag === "chatstate"
            ? `typing: ${Array.isArray(node.content) ? node.content[0]?.tag : ""}`
            : `message ${node.attrs.id}`,
        );
      expect(toTess).toEqual([
        `typing: composing`,
        `message ${ids[0]}`,
        `typing: composing`,
        `message ${ids[1]}`,
      ]);
    } finally {
      await settings({ typingMs: 0, sendGapMs: 0 });
    }
  });
});
