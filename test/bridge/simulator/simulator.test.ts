import { describe, expect, it } from "vitest";
import type { AuthUpdate, CloseInfo, Json, SocketHandlers } from "../../../bridge/src/protocol/seam.ts";
import { simulatorNetwork } from "../../../bridge/src/simulator/simulator.ts";
import { sleep, waitFor } from "../support/wait.ts";

/** Records every callback of one simulated socket; persistAuth resolves at once (the edge is not here). */
function recorder() {
  const seen: string[] = [];
  const qrs: string[] = [];
  const closes: CloseInfo[] = [];
  const writes: AuthUpdate[] = [];
  const opened: Json[] = [];
  const handlers: SocketHandlers = {
    onQr: (qr) => {
      seen.push("qr");
      qrs.push(qr);
    },
    onConnecting: () => seen.push("connecting"),
    onOpen: (me) => {
      seen.push("open");
      opened.push(me);
    },
    onClose: (info) => {
      seen.push(`close:${info.code}`);
      closes.push(info);
    },
    persistAuth: async (update) => {
      writes.push(update);
    },
    onNetworkEvent: (event) => {
      seen.push(`event:${event.kind}`);
    },
  };
  return { seen, qrs, closes, writes, opened, handlers };
}

describe("simulator", () => {
  it("shows a QR, links on scan (creds stored, then 515), and reconnects on the creds without a QR", async () => {
    const network = simulatorNetwork();
    const first = recorder();
    const socket = network.open({
      sessionId: "s1",
      auth: { creds: null, keys: {} },
      handlers: first.handlers,
    });
    expect(first.seen).toEqual([]); // nothing before open() returned
    await waitFor(() => first.qrs.length === 1, "first QR");
    expect(first.qrs[0]).toMatch(/^sim-qr:s1:1:/);
    expect(first.seen).toEqual(["connecting", "qr"]);
    expect(network.openSockets).toBe(1);

    socket.simulate?.scan();
    await waitFor(() => first.closes.length === 1, "515 after scan");
    expect(first.closes[0]).toMatchObject({ code: 515, qrExpired: false, loggedOut: false });
    expect(network.openSockets).toBe(0);
    const creds = first.writes[0]?.creds;
    expect(creds).toMatchObject({
      registered: true,
      me: { id: expect.stringMatching(/^\d{12}@s\.whatsapp\.net$/) },
    });

    const second = recorder();
    network.open({ sessionId: "s1", auth: { creds: creds ?? null, keys: {} }, handlers: second.handlers });
    await waitFor(() => second.opened.length === 1, "open on stored creds");
    expect(second.seen).toEqual(["connecting", "open"]);
    expect(second.opened[0]).toEqual({
      id: expect.stringMatching(/@s\.whatsapp\.net$/),
      name: expect.stringMatching(/^Simulated \d+$/),
    });
    expect(network.opens("s1")).toBe(2);
    expect(network.openSockets).toBe(1);
  });

  it("rotates fresh QRs and gives up with 408 / qrExpired after maxQrs", async () => {
    const network = simulatorNetwork({ qrIntervalMs: 5, maxQrs: 3 });
    const rec = recorder();
    network.open({ sessionId: "s2", auth: { creds: null, keys: {} }, handlers: rec.handlers });
    await waitFor(() => rec.closes.length === 1, "QR expiry");
    expect(rec.qrs).toHaveLength(3);
    expect(new Set(rec.qrs).size).toBe(3);
    expect(rec.closes[0]).toMatchObject({ code: 408, qrExpired: true, loggedOut: false });
    expect(network.openSockets).toBe(0);
  });

  it("pairing codes, disconnects, logout and close", async () => {
    const network = simulatorNetwork();
    const rec = recorder();
    const socket = network.open({ sessionId: "s3", auth: { creds: null, keys: {} }, handlers: rec.handlers });
    await expect(socket.requestPairingCode("4915112345678")).rejects.toThrow(/waits to be linked/);
    await waitFor(() => rec.qrs.length === 1, "QR");
    expect(await socket.requestPairingCode("4915112345678")).toMatch(/^[A-Z0-9]{8}$/);

    socket.simulate?.disconnect(401);
    expect(rec.closes[0]).toMatchObject({ code: 401, loggedOut: true });
    await expect(socket.logout()).rejects.toThrow();

    const other = recorder();
    const s4 = network.open({ sessionId: "s4", auth: { creds: null, keys: {} }, handlers: other.handlers });
    await waitFor(() => other.qrs.length === 1, "QR");
    await s4.logout();
    expect(other.closes[0]).toMatchObject({ code: 401, loggedOut: true });

    const quiet = recorder();
    const s5 = network.open({ sessionId: "s5", auth: { creds: null, keys: {} }, handlers: quiet.handlers });
    s5.close(); // the owner's close: no callbacks at all, not even the deferred start
    await sleep(20);
    expect(quiet.seen).toEqual([]);
    expect(network.openSockets).toBe(0);
  });
});
