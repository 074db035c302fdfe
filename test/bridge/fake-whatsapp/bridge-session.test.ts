/**
 * The bridge's own session code (FleetLink, the session link, the write-through auth store) on real
 * Baileys, against the fake WhatsApp and a fake edge: link a phone by QR, restart (515), connect; then
 * a new bridge gets the stored creds from the edge and connects without a QR.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import { baileysNetwork } from "../../../bridge/src/whatsapp/whatsapp.ts";
import { FakePhone } from "../../fake-whatsapp/phone.ts";
import { FakeWhatsApp } from "../../fake-whatsapp/server.ts";
import { startBridge } from "../support/bridge.ts";
import { type FakeEdge, startFakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** The session's life as the edge saw it; `auth` writes are many with real Baileys, and checked apart. */
const lifecycle = (events: SessionEvent[]) =>
  events.map((event) => event.kind).filter((kind) => kind !== "auth");
function stored<K extends SessionEvent["kind"]>(edge: FakeEdge, sessionId: string, kind: K) {
  return edge.session(sessionId).stored.filter((event): event is Extract<SessionEvent, { kind: K }> => {
    return event.kind === kind;
  });
}

async function bridgeOnFakeWhatsApp(edge: FakeEdge, whatsapp: FakeWhatsApp) {
  const bridge = await startBridge(
    edge,
    baileysNetwork({ waWebSocketUrl: whatsapp.url, connectTimeoutMs: 5_000, rootKey: whatsapp.rootKey }),
  );
  cleanup.push(() => bridge.fleet.shutdown());
  return bridge;
}

describe("bridge on real Baileys against the fake WhatsApp", () => {
  it("links by QR, restarts on 515, connects as the phone's device, and a new bridge reconnects from the stored creds", async () => {
    const whatsapp = await FakeWhatsApp.start();
    const edge = await startFakeEdge();
    cleanup.push(
      () => whatsapp.close(),
      () => edge.close(),
    );
    const phone = new FakePhone(whatsapp, "4915550001234");
    const first = await bridgeOnFakeWhatsApp(edge, whatsapp);
    await first.assign("w1");

    const [qr] = await waitFor(
      () => stored(edge, "w1", "qr").length > 0 && stored(edge, "w1", "qr"),
      "qr",
      10_000,
    );
    expect(qr?.qr).toMatch(/^https:\/\/wa\.me\/settings\/linked_devices#2@/);
    const device = await phone.scan(qr?.qr ?? "");

    const [connected] = await waitFor(
      () => stored(edge, "w1", "connected").length > 0 && stored(edge, "w1", "connected"),
      "connected",
      15_000,
    );
    expect(connected?.me.id).toBe(device.jid);
    expect(stored(edge, "w1", "disconnected")[0]).toMatchObject({ code: 515, next: "reconnecting" });
    expect(lifecycle(edge.session("w1").stored)).toEqual([
      "connecting",
      "qr",
      "disconnected",
      "connecting",
      "connected",
    ]);
    // The edge holds what a restarted bridge needs: the linked creds and the uploaded pre-keys.
    expect(edge.session("w1").auth.creds).toMatchObject({ me: { id: device.jid, lid: device.lid } });
    expect(Object.keys(edge.session("w1").auth.keys).filter((key) => key.startsWith("pre-key:")).length).toBe(
      device.preKeys.size,
    );

    await first.fleet.shutdown();
    const second = await bridgeOnFakeWhatsApp(edge, whatsapp);
    edge.session("w1").epoch = 2;
    edge.session("w1").lastSeq = 0;
    await second.assign("w1");
    await waitFor(() => stored(edge, "w1", "connected").length === 2, "reconnected", 15_000);
    expect(lifecycle(edge.session("w1").stored).slice(5)).toEqual(["connecting", "connected"]);
    expect(whatsapp.logins).toEqual([device.jid, device.jid]);
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);
});
