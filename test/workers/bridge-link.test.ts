import { afterEach, describe, expect, it } from "vitest";
import { dial, emit, FakeBridge, QR_IMAGE } from "./fake-bridge";
import { asKey, call, createUser, generateKey } from "./helpers";
import { eventually } from "./patience";

type Envelope<T> = { status: boolean; message: string; data: T };
type Detail = { status: string; state: string; me: { id: string } | null; hasInstance: boolean };

const bridges: FakeBridge[] = [];
afterEach(() => {
  // Leave the fleet empty for the next test: a bridge that goes away on purpose (1001) is evacuated at once.
  for (const bridge of bridges.splice(0)) bridge.fleet.socket.close(1001, "test done");
});

async function newBridge(capacity = 100): Promise<FakeBridge> {
  const bridge = await new FakeBridge(undefined, capacity).connect();
  bridges.push(bridge);
  return bridge;
}

async function ownerWithSession() {
  const user = await createUser("OWNER");
  const key = await generateKey(user);
  const res = await call<Envelope<{ id: string; sessionId: string }>>("POST", "/api/sessions", {
    body: { name: "Linked" },
    headers: asKey(key),
  });
  return { key, session: res.body.data };
}

const detail = async (key: string, sessionId: string) =>
  (await call<Envelope<Detail>>("GET", `/api/sessions/${sessionId}`, { headers: asKey(key) })).body.data;

async function startAndHold(bridge: FakeBridge, key: string, session: { id: string; sessionId: string }) {
  const started = await call("POST", `/api/sessions/${session.sessionId}/start`, { headers: asKey(key) });
  expect(started.status).toBe(200);
  await bridge.waitForAssign(session.id);
  const held = await bridge.hold(session.id);
  if (!("link" in held)) throw new Error(`hold failed: ${held.status}`);
  return held;
}

describe("bridge authentication", () => {
  it("refuses a wrong token, a missing upgrade and a bad query", async () => {
    expect((await dial("/bridge/v1/fleet?bridge=b1&capacity=5", "wrong")).status).toBe(401);
    expect((await dial("/bridge/v1/fleet?bridge=b1&capacity=5", "")).status).toBe(401);
    const plain = await call("GET", "/bridge/v1/fleet?bridge=b1&capacity=5", {
      headers: { Authorization: "Bearer test-bridge-token" },
    });
    expect(plain.status).toBe(426);
    expect((await dial("/bridge/v1/fleet?bridge=bad id&capacity=5")).status).toBe(400);
    expect((await dial("/bridge/v1/fleet?bridge=local-bridge&capacity=0")).status).toBe(400);
    expect((await dial("/bridge/v1/sessions/no-such-session?bridge=local-bridge")).status).toBe(404);
  });
});

describe("a session on a bridge", () => {
  it("start → assign → welcome → QR → connected, with every event acknowledged", async () => {
    const bridge = await newBridge();
    const { key, session } = await ownerWithSession();
    const { link, welcome } = await startAndHold(bridge, key, session);
    expect(welcome).toMatchObject({
      epoch: 1,
      desired: "running",
      auth: { creds: null, keys: {} },
      lastSeq: 0,
    });
    expect(await detail(key, session.sessionId)).toMatchObject({
      status: "Connecting",
      state: "starting",
      hasInstance: true,
    });

    await emit(link, 1, 1, { kind: "qr", qr: "sim-qr-1", image: QR_IMAGE });
    const qr = await call("GET", `/api/sessions/${session.sessionId}/qr`, { headers: asKey(key) });
    expect(qr.body).toEqual({ success: true, qr: "sim-qr-1", base64: QR_IMAGE });
    expect(await detail(key, session.sessionId)).toMatchObject({ status: "Connecting", state: "scan_qr" });

    await emit(link, 1, 2, { kind: "auth", creds: { registered: true }, keys: { "pre-key:1": { k: 1 } } });
    await emit(link, 1, 3, { kind: "connected", me: { id: "628111@s.whatsapp.net", name: "Ana" } });
    expect(await detail(key, session.sessionId)).toMatchObject({
      status: "Connected",
      state: "connected",
      me: { id: "628111@s.whatsapp.net", name: "Ana" },
    });
    expect((await call("GET", `/api/sessions/${session.sessionId}/qr`, { headers: asKey(key) })).status).toBe(
      400,
    );
    const listed = await call<Envelope<{ id: string; status: string }[]>>("GET", "/api/sessions", {
      headers: asKey(key),
    });
    expect(listed.body.data.find((s) => s.id === session.id)?.status).toBe("Connected");
  });

  it("applies a replayed event once: a duplicate seq is acked again and changes nothing", async () => {
    const bridge = await newBridge();
    const { key, session } = await ownerWithSession();
    const { link } = await startAndHold(bridge, key, session);
    await emit(link, 1, 1, { kind: "connected", me: { id: "628222@s.whatsapp.net" } });
    link.frames.length = 0;
    await emit(link, 1, 1, { kind: "qr", qr: "late-duplicate", image: QR_IMAGE });
    expect(await detail(key, session.sessionId)).toMatchObject({ state: "connected" });
  });

  it("closes the link on bad JSON, unknown frames and stale epochs, changing nothing", async () => {
    const bridge = await newBridge();
    const { key, session } = await ownerWithSession();
    for (const bad of [
      "{not json",
      JSON.stringify({ type: "surprise" }),
      JSON.stringify({ type: "event", epoch: 7, seq: 1, event: { kind: "connected", me: { id: "x" } } }),
    ]) {
      const held = await bridge.hold(session.id).catch(() => null);
      const link = held && "link" in held ? held.link : (await startAndHold(bridge, key, session)).link;
      link.send(bad);
      expect((await link.closedWith()).code).toBe(4400);
    }
    // Nothing from the bad frames was applied; the dropped link itself reads as "reconnecting" once the
    // object has handled its close (which can come just after the bridge saw the socket end).
    await eventually(async () => (await detail(key, session.sessionId)).state === "reconnecting");
    expect((await detail(key, session.sessionId)).me).toBeNull();
  });

  it("refuses a second bridge for a held session with 409", async () => {
    const first = await newBridge();
    const { key, session } = await ownerWithSession();
    await startAndHold(first, key, session);
    const intruder = await newBridge();
    expect(await intruder.hold(session.id)).toEqual({ status: 409 });
  });

  it("50 concurrent starts assign the session once", async () => {
    const bridge = await newBridge();
    const { key, session } = await ownerWithSession();
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        call("POST", `/api/sessions/${session.sessionId}/start`, { headers: asKey(key) }),
      ),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    await bridge.waitForAssign(session.id);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(bridge.assignments().filter((s) => s === session.id)).toHaveLength(1);
  });

  it("relays commands: pair returns the bridge's code; stop releases the session", async () => {
    const bridge = await newBridge();
    const { key, session } = await ownerWithSession();
    const { link } = await startAndHold(bridge, key, session);
    await emit(link, 1, 1, { kind: "qr", qr: "q", image: QR_IMAGE });

    const pairing = call("POST", `/api/sessions/${session.sessionId}/pair`, {
      body: { phoneNumber: "+62 812-3456-789" },
      headers: asKey(key),
    });
    const command = await link.next((f) => f.type === "command" && f.name === "pair");
    expect(command.args).toEqual({ phoneNumber: "628123456789" });
    link.send({ type: "result", epoch: 1, id: command.id, ok: true, data: { code: "ABCD1234" } });
    expect((await pairing).body).toMatchObject({ status: true, data: { pairingCode: "ABCD1234" } });

    const stopping = call("POST", `/api/sessions/${session.sessionId}/stop`, { headers: asKey(key) });
    const stop = await link.next((f) => f.type === "command" && f.name === "stop");
    link.send({ type: "result", epoch: 1, id: stop.id, ok: true });
    expect((await stopping).status).toBe(200);
    expect((await link.closedWith()).code).toBe(4002);
    await bridge.fleet.next((f) => f.type === "unassign" && f.session === session.id);
    expect(await detail(key, session.sessionId)).toMatchObject({
      status: "Disconnected",
      state: "stopped",
      hasInstance: false,
    });
  });

  it("drives the documented transition for each terminal disconnect", async () => {
    const bridge = await newBridge();
    for (const next of ["logged_out", "failed", "stopped", "reconnecting"] as const) {
      const { key, session } = await ownerWithSession();
      const { link } = await startAndHold(bridge, key, session);
      await emit(link, 1, 1, { kind: "auth", creds: { registered: true } });
      await emit(link, 1, 2, { kind: "connected", me: { id: "628333@s.whatsapp.net" } });
      await emit(link, 1, 3, { kind: "disconnected", code: 401, reason: "test", next });
      const expectedStatus = next === "reconnecting" ? "Connecting" : "Disconnected";
      expect(await detail(key, session.sessionId)).toMatchObject({ state: next, status: expectedStatus });
      if (next !== "reconnecting") expect((await link.closedWith()).code).toBe(4002);
    }
  });

  it("a network error stays network_error through the retries until WhatsApp answers", async () => {
    const bridge = await newBridge();
    const { key, session } = await ownerWithSession();
    const { link } = await startAndHold(bridge, key, session);
    const reason = "WhatsApp unreachable: WebSocket Error (getaddrinfo EAI_AGAIN web.whatsapp.com)";
    await emit(link, 1, 1, { kind: "disconnected", code: 408, reason, next: "network_error" });
    const failing = { state: "network_error", status: "Disconnected", lastDisconnect: `408 ${reason}` };
    expect(await detail(key, session.sessionId)).toMatchObject(failing);
    // The bridge's next attempt: still the same outage, not a new "starting".
    await emit(link, 1, 2, { kind: "connecting" });
    expect(await detail(key, session.sessionId)).toMatchObject(failing);
    await emit(link, 1, 3, { kind: "connected", me: { id: "628555@s.whatsapp.net" } });
    expect(await detail(key, session.sessionId)).toMatchObject({ state: "connected", status: "Connected" });
  });
});

describe("failover", () => {
  it("moves a dead bridge's sessions to a live one after the grace period, with their credentials", async () => {
    const a = await newBridge();
    const { key, session } = await ownerWithSession();
    const { link } = await startAndHold(a, key, session);
    await emit(link, 1, 1, {
      kind: "auth",
      creds: { registered: true, me: "kept" },
      keys: { "session:x": { s: 1 } },
    });
    await emit(link, 1, 2, { kind: "connected", me: { id: "628444@s.whatsapp.net" } });

    const b = await newBridge();
    bridges.splice(bridges.indexOf(a), 1);
    a.fleet.socket.close(4000, "simulated crash"); // not 1001: the fleet waits out the grace period
    link.socket.close(4000, "simulated crash");

    await b.waitForAssign(session.id);
    const held = await b.hold(session.id);
    if (!("link" in held)) throw new Error("new bridge could not hold the session");
    expect(held.welcome).toMatchObject({
      epoch: 2,
      desired: "running",
      auth: { creds: { registered: true, me: "kept" }, keys: { "session:x": { s: 1 } } },
    });
    expect(await a.hold(session.id)).toEqual({ status: 409 });
    await emit(held.link, 2, 1, { kind: "connected", me: { id: "628444@s.whatsapp.net" } });
    expect(await detail(key, session.sessionId)).toMatchObject({ state: "connected", hasInstance: true });
  });
});
