/**
 * What a session reports when WhatsApp cannot be reached or refuses the client, through the bridge's
 * real Baileys seam (`baileysNetwork`) and its reconnect policy: a refused or silent endpoint is a
 * network_error (never "QR expired"), and a version WhatsApp refuses (405, from the fake WhatsApp)
 * fails with the fix in the reason, while a pinned WA_VERSION reaches the server and gets a QR. (The
 * bridge reading the current version on a 405 is version.test.ts.)
 */

import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { DEFAULT_CONNECTION_CONFIG } from "@whiskeysockets/baileys";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import type { CloseInfo, SocketHandlers } from "../../../bridge/src/protocol/seam.ts";
import { decideReconnect } from "../../../bridge/src/sessions/reconnect-policy.ts";
import { VersionBook } from "../../../bridge/src/whatsapp/version.ts";
import { baileysNetwork, bundledVersion } from "../../../bridge/src/whatsapp/whatsapp.ts";
import { FakeWhatsApp } from "../../fake-whatsapp/server.ts";
import { waitFor } from "../support/wait.ts";

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

function open(
  url: string,
  options: { connectTimeoutMs?: number; version?: [number, number, number]; rootKey?: Uint8Array } = {},
) {
  const closes: CloseInfo[] = [];
  const qrs: string[] = [];
  const handlers: SocketHandlers = {
    onQr: (qr) => qrs.push(qr),
    onConnecting: () => {},
    onOpen: () => {},
    onClose: (info) => closes.push(info),
    persistAuth: async () => {},
    onNetworkEvent: () => {},
  };
  const { version, ...rest } = options;
  const versions = version
    ? new VersionBook({ pinned: version, sourceUrl: null, bundled: bundledVersion() })
    : undefined;
  const socket = baileysNetwork({
    waWebSocketUrl: url,
    connectTimeoutMs: 5_000,
    ...rest,
    ...(versions ? { versions } : {}),
  }).open({
    sessionId: "net",
    auth: { creds: null, keys: {} },
    handlers,
  });
  cleanup.push(() => socket.close());
  return { closes, qrs };
}

/** A port nothing listens on: the connection is refused at once, like a firewall's reject. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const fresh = { badSessionRetries: 0 };

describe("network failures and refused versions", () => {
  it("a refused connection is a network_error with the socket's reason, retried with backoff", async () => {
    const { closes, qrs } = open(`ws://127.0.0.1:${await closedPort()}/ws/chat`);
    const close = await waitFor(() => closes[0], "the close", 10_000);
    expect(qrs).toEqual([]);
    expect(close).toMatchObject({ code: 408, qrExpired: false, networkError: true });
    expect(close.reason).toMatch(/ECONNREFUSED/);
    expect(decideReconnect(close, fresh)).toEqual({
      next: "network_error",
      delay: "backoff",
      reason: expect.stringMatching(/^WhatsApp unreachable: .*ECONNREFUSED/),
    });
  }, 20_000);

  it("an endpoint that never answers the handshake is a network_error, not a QR expiry", async () => {
    const silent = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => silent.once("listening", () => resolve()));
    cleanup.push(() => new Promise<void>((resolve) => silent.close(() => resolve())));
    const { port } = silent.address() as AddressInfo;
    const { closes } = open(`ws://127.0.0.1:${port}/ws/chat`, { connectTimeoutMs: 1_500 });
    const close = await waitFor(() => closes[0], "the timeout", 15_000);
    expect(close).toMatchObject({ code: 408, qrExpired: false, networkError: true });
    expect(decideReconnect(close, fresh).next).toBe("network_error");
  }, 25_000);

  it("a version WhatsApp refuses (405) fails naming WA_VERSION_URL; a pinned version gets a QR", async () => {
    const bundled = DEFAULT_CONNECTION_CONFIG.version;
    const newer: [number, number, number] = [bundled[0], bundled[1], bundled[2] + 1];
    const server = await FakeWhatsApp.start({ minimumVersion: newer });
    cleanup.push(() => server.close());

    const refused = open(server.url, { rootKey: server.rootKey });
    const close = await waitFor(() => refused.closes[0], "the refusal", 10_000);
    expect(server.clientVersions[0]).toEqual([...bundled]);
    expect(close).toMatchObject({ code: 405, networkError: false, qrExpired: false });
    expect(decideReconnect(close, fresh)).toEqual({
      next: "failed",
      reason: expect.stringContaining("WA_VERSION_URL"),
    });

    const configured = open(server.url, { version: newer, rootKey: server.rootKey });
    await waitFor(() => configured.qrs[0], "a QR with the configured version", 10_000);
    expect(server.clientVersions.at(-1)).toEqual(newer);
  }, 30_000);
});
