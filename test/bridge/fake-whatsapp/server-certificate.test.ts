/**
 * WhatsApp's server certificate chain, checked by the bridge (issue 25): real Baileys 7.0.0-rc14
 * against the fake WhatsApp presenting forged chains (refused before Baileys answers the server's
 * hello: the session fails with the reason, no QR, no retry) and the proper one (pairs and connects).
 * Baileys alone accepts every one of these chains (its `Curve.verify` ignores the result).
 */
import { WA_CERT_DETAILS } from "@whiskeysockets/baileys";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import type { CloseInfo } from "../../../bridge/src/protocol/seam.ts";
import { decideReconnect } from "../../../bridge/src/sessions/reconnect-policy.ts";
import { WHATSAPP_ROOT_KEY } from "../../../bridge/src/whatsapp/server-certificate.ts";
import { baileysNetwork } from "../../../bridge/src/whatsapp/whatsapp.ts";
import type { CertificateChainKind } from "../../fake-whatsapp/noise.ts";
import { FakePhone } from "../../fake-whatsapp/phone.ts";
import { FakeWhatsApp } from "../../fake-whatsapp/server.ts";
import { startBridge } from "../support/bridge.ts";
import { type FakeEdge, startFakeEdge } from "../support/fake-edge.ts";
import { sleep, waitFor } from "../support/wait.ts";

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function fakeWhatsApp(certificates: CertificateChainKind): Promise<FakeWhatsApp> {
  const whatsapp = await FakeWhatsApp.start({ certificates });
  cleanup.push(() => whatsapp.close());
  return whatsapp;
}

/** One real Baileys socket through the bridge's seam; what it reported. */
function open(whatsapp: FakeWhatsApp, rootKey?: Uint8Array) {
  const closes: CloseInfo[] = [];
  const qrs: string[] = [];
  const socket = baileysNetwork({
    waWebSocketUrl: whatsapp.url,
    connectTimeoutMs: 5_000,
    ...(rootKey ? { rootKey } : {}),
  }).open({
    sessionId: "cert",
    auth: { creds: null, keys: {} },
    handlers: {
      onQr: (qr) => qrs.push(qr),
      onConnecting: () => {},
      onOpen: () => {},
      onClose: (info) => closes.push(info),
      persistAuth: async () => {},
      onNetworkEvent: () => {},
    },
  });
  cleanup.push(() => socket.close());
  return { closes, qrs };
}

function stored<K extends SessionEvent["kind"]>(edge: FakeEdge, sessionId: string, kind: K) {
  return edge.session(sessionId).stored.filter((event): event is Extract<SessionEvent, { kind: K }> => {
    return event.kind === kind;
  });
}

async function bridgeOn(whatsapp: FakeWhatsApp) {
  const edge = await startFakeEdge();
  cleanup.push(() => edge.close());
  const bridge = await startBridge(
    edge,
    baileysNetwork({ waWebSocketUrl: whatsapp.url, connectTimeoutMs: 5_000, rootKey: whatsapp.rootKey }),
  );
  cleanup.push(() => bridge.fleet.shutdown());
  return { edge, bridge };
}

const forgeries: Array<[CertificateChainKind, RegExp]> = [
  ["intermediate-not-from-root", /intermediate certificate is not signed by WhatsApp's root key/],
  ["leaf-not-from-intermediate", /leaf certificate is not signed by the intermediate/],
  ["leaf-for-another-key", /leaf certificate is for another key than the server's/],
];

describe("WhatsApp's server certificate chain", () => {
  it("pins WhatsApp's real root key (the one Baileys ships)", () => {
    expect(WHATSAPP_ROOT_KEY.equals(Buffer.from(WA_CERT_DETAILS.PUBLIC_KEY))).toBe(true);
  });

  it.each(forgeries)(
    "a chain with %s is refused before the client answers the hello",
    async (kind, problem) => {
      const whatsapp = await fakeWhatsApp(kind);
      const { closes, qrs } = open(whatsapp, whatsapp.rootKey);
      const close = await waitFor(() => closes[0], "the close", 10_000);
      expect(close).toMatchObject({ certificateRefused: true, networkError: false, loggedOut: false });
      expect(close.reason).toMatch(problem);
      expect(qrs).toEqual([]);
      // Nothing of the account left the bridge: the server never got the client's finish (its login).
      expect(whatsapp.clientVersions).toEqual([]);
      expect(decideReconnect(close, { badSessionRetries: 0 })).toEqual({
        next: "failed",
        reason: expect.stringMatching(/^WhatsApp's server certificate was refused: .*not retried/),
      });
    },
    20_000,
  );

  it("a proper chain from a root that is not WhatsApp's is refused by default (a forged server)", async () => {
    const whatsapp = await fakeWhatsApp("proper");
    const { closes, qrs } = open(whatsapp);
    const close = await waitFor(() => closes[0], "the close", 10_000);
    expect(close.certificateRefused).toBe(true);
    expect(close.reason).toMatch(/not signed by WhatsApp's root key/);
    expect(qrs).toEqual([]);
    expect(whatsapp.clientVersions).toEqual([]);
  }, 20_000);

  it("through the bridge, a forged chain fails the session with the reason and is not retried", async () => {
    const whatsapp = await fakeWhatsApp("leaf-not-from-intermediate");
    const { edge, bridge } = await bridgeOn(whatsapp);
    await bridge.assign("forged");
    const [disconnected] = await waitFor(
      () => stored(edge, "forged", "disconnected").length > 0 && stored(edge, "forged", "disconnected"),
      "the session's disconnect",
      10_000,
    );
    expect(disconnected).toMatchObject({
      next: "failed",
      reason: expect.stringMatching(/certificate was refused: the leaf certificate is not signed/),
    });
    // Reconnects back off from 20 ms here: a second of silence means the bridge gave up on it.
    await sleep(1_000);
    expect(whatsapp.connectionsAccepted).toBe(1);
    expect(stored(edge, "forged", "qr")).toEqual([]);
    expect(bridge.logs).toContainEqual(
      expect.objectContaining({
        msg: "whatsapp closed",
        fields: expect.objectContaining({ next: "failed" }),
      }),
    );
  }, 20_000);

  it("through the bridge, the proper chain is accepted: QR, pairing, connected", async () => {
    const whatsapp = await fakeWhatsApp("proper");
    const { edge, bridge } = await bridgeOn(whatsapp);
    await bridge.assign("proper");
    const [qr] = await waitFor(
      () => stored(edge, "proper", "qr").length > 0 && stored(edge, "proper", "qr"),
      "a QR",
      10_000,
    );
    const device = await new FakePhone(whatsapp, "4915550002222").scan(qr?.qr ?? "");
    const [connected] = await waitFor(
      () => stored(edge, "proper", "connected").length > 0 && stored(edge, "proper", "connected"),
      "connected",
      15_000,
    );
    expect(connected?.me.id).toBe(device.jid);
    expect(whatsapp.logins).toEqual([device.jid]);
  }, 40_000);
});
