/**
 * The real Baileys side of the seam, without the internet: the write-through key store, and a real
 * Baileys socket dialling a local WebSocket server that hangs up on it.
 */
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import type { AuthUpdate, CloseInfo, SocketHandlers } from "../../../bridge/src/protocol/seam.ts";
import { baileysNetwork, makeWriteThroughKeyStore } from "../../../bridge/src/whatsapp/whatsapp.ts";
import { sleep, waitFor } from "../support/wait.ts";

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function localServer() {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return { server, url: `ws://127.0.0.1:${port}/ws/chat` };
}

function recorder() {
  const seen: string[] = [];
  const closes: CloseInfo[] = [];
  const handlers: SocketHandlers = {
    onQr: () => seen.push("qr"),
    onConnecting: () => seen.push("connecting"),
    onOpen: () => seen.push("open"),
    onClose: (info) => {
      seen.push("close");
      closes.push(info);
    },
    persistAuth: async () => {},
    onNetworkEvent: () => seen.push("event"),
  };
  return { seen, closes, handlers };
}

describe("whatsapp.ts (Baileys)", () => {
  it("key store: set resolves only once persisted; get revives Buffers and app-state keys; null deletes", async () => {
    const writes: AuthUpdate[] = [];
    let release = () => {};
    const store = makeWriteThroughKeyStore(
      {
        "pre-key:1": { public: { type: "Buffer", data: "AQID" }, private: { type: "Buffer", data: "BAUG" } },
      },
      (update) => {
        writes.push(update);
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      },
    );
    const seeded = await store.get("pre-key", ["1", "2"]);
    expect(Object.keys(seeded)).toEqual(["1"]);
    expect(Buffer.isBuffer(seeded["1"]?.public)).toBe(true);
    expect([...(seeded["1"]?.public ?? [])]).toEqual([1, 2, 3]);

    let done = false;
    const set = Promise.resolve(
      store.set({ session: { a: new Uint8Array([9, 9]) }, "pre-key": { "1": null } }),
    ).then(() => {
      done = true;
    });
    await sleep(30);
    expect(done).toBe(false);
    expect(writes).toEqual([{ keys: { "session:a": { type: "Buffer", data: "CQk=" }, "pre-key:1": null } }]);
    release();
    await set;
    expect(done).toBe(true);
    expect(await store.get("pre-key", ["1"])).toEqual({});

    const appState = makeWriteThroughKeyStore(
      { "app-state-sync-key:k": { keyData: { type: "Buffer", data: "AQ==" }, timestamp: 5 } },
      async () => {},
    );
    const key = (await appState.get("app-state-sync-key", ["k"])).k;
    expect(key?.constructor.name).toBe("AppStateSyncKeyData");
    expect(key?.keyData && [...key.keyData]).toEqual([1]);
  });

  it("builds a real Baileys socket against a local server and reports its close through the seam", async () => {
    const { server, url } = await localServer();
    const firstBytes: Buffer[] = [];
    server.on("connection", (ws) => {
      ws.once("message", (data) => {
        firstBytes.push(Buffer.from(data as Buffer));
        ws.close(); // hang up on the noise handshake
      });
    });
    const rec = recorder();
    const socket = baileysNetwork({ waWebSocketUrl: url, connectTimeoutMs: 5_000 }).open({
      sessionId: "real-1",
      auth: { creds: null, keys: {} },
      handlers: rec.handlers,
    });
    cleanup.push(() => socket.close());
    await waitFor(() => rec.closes.length === 1, "close through the seam", 10_000);
    // Baileys' noise handshake starts with the "WA" header: it really spoke WhatsApp's protocol to us.
    expect(firstBytes[0]?.subarray(0, 2).toString("latin1")).toBe("WA");
    expect(rec.seen[0]).toBe("connecting");
    expect(rec.closes[0]).toMatchObject({ code: 428, qrExpired: false, loggedOut: false });
  }, 20_000);

  it("close() ends a Baileys socket silently, without logout", async () => {
    const { server, url } = await localServer();
    let connected = 0;
    server.on("connection", () => connected++);
    const rec = recorder();
    const socket = baileysNetwork({ waWebSocketUrl: url, connectTimeoutMs: 5_000 }).open({
      sessionId: "real-2",
      auth: { creds: null, keys: {} },
      handlers: rec.handlers,
    });
    await waitFor(() => connected === 1, "dialled", 10_000);
    socket.close();
    await sleep(200);
    expect(rec.seen).not.toContain("close");
  }, 20_000);
});
