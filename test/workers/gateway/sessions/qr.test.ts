// GET /api/sessions/:id/qr right after POST …/start, as the README does: the bridge shows its first QR
// a moment later, so the request waits for it (QR_WAIT_MS, 5 s in vitest.workers.config.ts; 10 s by
// default) instead of answering a 404 that reads as "this session does not exist".
import { afterEach, describe, expect, it } from "vitest";
import { ownedSession } from "../../connected-session";
import { emit, FakeBridge, QR_IMAGE } from "../../fake-bridge";
import { asKey, call } from "../../helpers";

const bridges: FakeBridge[] = [];
afterEach(() => {
  for (const bridge of bridges.splice(0)) bridge.fleet.socket.close(1000, "test done");
});

describe("session QR while starting", () => {
  it("waits for the first QR the bridge shows after start and answers it", async () => {
    const session = await ownedSession("qr-soon");
    const bridge = await new FakeBridge().connect();
    bridges.push(bridge);
    const started = await call("POST", `/api/sessions/${session.slug}/start`, {
      headers: asKey(session.key),
    });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const asked = call("GET", `/api/sessions/${session.slug}/qr`, { headers: asKey(session.key) });

    await bridge.waitForAssign(session.id);
    const held = await bridge.hold(session.id);
    if (!("link" in held)) throw new Error(`hold failed: ${held.status}`);
    await emit(held.link, 1, 1, { kind: "qr", qr: "2@first-qr", image: QR_IMAGE });

    const qr = await asked;
    expect(qr.status, JSON.stringify(qr.body)).toBe(200);
    expect(qr.body).toEqual({ success: true, qr: "2@first-qr", base64: QR_IMAGE });
  });

  it("answers 202 with Retry-After when no QR comes in the bound, and 404 naming start when stopped", async () => {
    const session = await ownedSession("qr-later");
    const stopped = await call("GET", `/api/sessions/${session.slug}/qr`, { headers: asKey(session.key) });
    expect(stopped.status).toBe(404);
    expect(stopped.body).toMatchObject({
      status: false,
      message: "QR code not available yet",
      error: `The session is stopped; POST /api/sessions/${session.slug}/start first`,
    });

    // No bridge is connected in this test: the session stays "starting".
    await call("POST", `/api/sessions/${session.slug}/start`, { headers: asKey(session.key) });
    const pending = await call("GET", `/api/sessions/${session.slug}/qr`, { headers: asKey(session.key) });
    expect(pending.status, JSON.stringify(pending.body)).toBe(202);
    expect(pending.headers.get("Retry-After")).toBe("2");
    expect(pending.body).toEqual({
      success: false,
      state: "starting",
      message: "The session is starting (waiting for a bridge to take it); no QR yet, retry in 2 s",
    });
  });

  it("still answers 404 for a session that does not exist", async () => {
    const session = await ownedSession("qr-exists");
    const missing = await call("GET", "/api/sessions/no-such-session/qr", { headers: asKey(session.key) });
    expect(missing.status).toBe(404);
  });
});
