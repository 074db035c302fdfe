/**
 * WhatsApp retires the version a bridge announces (issue 29, "Version"), on real Baileys against the
 * fake WhatsApp, with the bridge's own session code and a fake edge: the socket is refused (405), the
 * bridge reads the current version from WhatsApp Web's service worker and connects without anyone
 * setting WA_VERSION; a bridge that cannot read it (offline) uses the version that last connected the
 * session, which the edge hands it in the welcome.
 */
import { DEFAULT_CONNECTION_CONFIG } from "@whiskeysockets/baileys";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import { VersionBook } from "../../../bridge/src/whatsapp/version.ts";
import { baileysNetwork, bundledVersion } from "../../../bridge/src/whatsapp/whatsapp.ts";
import { FakePhone } from "../../fake-whatsapp/phone.ts";
import { FakeWhatsApp } from "../../fake-whatsapp/server.ts";
import { WebVersionHost } from "../../fake-whatsapp/web-version.ts";
import { startBridge } from "../support/bridge.ts";
import { type FakeEdge, startFakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

function stored<K extends SessionEvent["kind"]>(edge: FakeEdge, sessionId: string, kind: K) {
  return edge.session(sessionId).stored.filter((event): event is Extract<SessionEvent, { kind: K }> => {
    return event.kind === kind;
  });
}

async function bridgeWith(edge: FakeEdge, whatsapp: FakeWhatsApp, versions: VersionBook) {
  const network = baileysNetwork({
    waWebSocketUrl: whatsapp.url,
    connectTimeoutMs: 5_000,
    rootKey: whatsapp.rootKey,
    versions,
  });
  const bridge = await startBridge(edge, network);
  cleanup.push(() => bridge.fleet.shutdown());
  return bridge;
}

/**
 * A fake WhatsApp that refuses anything older than `current`, WhatsApp Web's sw.js naming build
 * `revision`, and a fake edge; all closed after the test.
 */
async function retiredVersionWorld(current: [number, number, number], revision: number) {
  const whatsapp = await FakeWhatsApp.start({ minimumVersion: current });
  const web = await WebVersionHost.start(revision);
  const edge = await startFakeEdge();
  cleanup.push(
    () => whatsapp.close(),
    () => web.stop(),
    () => edge.close(),
  );
  return { whatsapp, web, edge };
}

describe("the WhatsApp Web version", () => {
  it("bundledVersion is what Baileys announces by default", () => {
    expect(bundledVersion()).toEqual([...DEFAULT_CONNECTION_CONFIG.version]);
  });

  it("a retired version: read the current one on the 405, connect; offline, the edge's last good one", async () => {
    const bundled = bundledVersion();
    const current: [number, number, number] = [bundled[0], bundled[1], bundled[2] + 7];
    const { whatsapp, web, edge } = await retiredVersionWorld(current, current[2]);
    const phone = new FakePhone(whatsapp, "4915550007777");

    // Started before WhatsApp shipped (nothing read yet): the first socket announces the bundled version.
    const first = await bridgeWith(edge, whatsapp, new VersionBook({ sourceUrl: web.url, bundled }));
    await first.assign("v1");
    const [qr] = await waitFor(
      () => stored(edge, "v1", "qr").length > 0 && stored(edge, "v1", "qr"),
      "qr",
      20_000,
    );
    expect(whatsapp.clientVersions.slice(0, 2)).toEqual([bundled, current]);
    expect(web.hits).toBe(1);
    expect(stored(edge, "v1", "disconnected")[0]).toMatchObject({ code: 405, next: "reconnecting" });

    await phone.scan(qr?.qr ?? "");
    const connected = await waitFor(() => stored(edge, "v1", "connected")[0], "connected", 20_000);
    expect(connected.waVersion).toEqual({ version: current.join("."), source: "fetched" });

    // Offline now (the service worker cannot be read): a new bridge uses what last connected.
    await first.fleet.shutdown();
    const source = web.url;
    await web.stop();
    const offline = new VersionBook({ sourceUrl: source, bundled });
    expect(await offline.refresh()).toBe(false);
    const second = await bridgeWith(edge, whatsapp, offline);
    edge.session("v1").epoch = 2;
    edge.session("v1").lastSeq = 0;
    await second.assign("v1");
    await waitFor(() => stored(edge, "v1", "connected").length === 2, "reconnected", 20_000);
    expect(stored(edge, "v1", "connected")[1]?.waVersion).toEqual({
      version: current.join("."),
      source: "edge",
    });
    expect(whatsapp.clientVersions.at(-1)).toEqual(current);
    expect(stored(edge, "v1", "disconnected").filter((d) => d.code === 405)).toHaveLength(1);
  }, 90_000);

  it("a 405 with no newer version to read fails saying what to check, and retries only once", async () => {
    const bundled = bundledVersion();
    const current: [number, number, number] = [bundled[0], bundled[1], bundled[2] + 7];
    // The source still names the old build: reading it changes nothing.
    const { whatsapp, web, edge } = await retiredVersionWorld(current, bundled[2]);
    const bridge = await bridgeWith(edge, whatsapp, new VersionBook({ sourceUrl: web.url, bundled }));
    await bridge.assign("v2");
    const failed = await waitFor(
      () => stored(edge, "v2", "disconnected").find((d) => d.next === "failed"),
      "failed",
      20_000,
    );
    expect(failed).toMatchObject({ code: 405, reason: expect.stringContaining("WA_VERSION_URL") });
    expect(whatsapp.clientVersions).toEqual([bundled]);
    expect(web.hits).toBe(1);
  }, 60_000);
});
