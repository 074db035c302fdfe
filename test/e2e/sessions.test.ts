// The session lifecycle through real processes: `SIMULATOR=1 npm start` (wrangler dev + one bridge
// on the simulated WhatsApp network), driven over HTTP as a user would.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { decodePngDataUrl } from "../support/png.ts";
import { type Stack, startStack } from "../support/stack.ts";

type Detail = { status: string; state: string; me: { id: string } | null; hasInstance: boolean };
type Envelope<T> = { status: boolean; message: string; data: T };

let stack: Stack;
let api: ApiClient;

beforeAll(async () => {
  stack = await startStack({ env: { SIMULATOR: "1" } });
  api = await adminClient(stack.baseUrl);
});

afterAll(async () => {
  await stack?.stop();
});

const detail = async (id: string) =>
  (await api.call<Envelope<Detail>>("GET", `/api/sessions/${id}`)).body.data;
const inState = (id: string, state: string) =>
  eventually(
    async () => {
      const d = await detail(id);
      return d.state === state ? d : undefined;
    },
    20_000,
    `${id} to be ${state}`,
  );

async function qrOf(id: string) {
  return eventually(
    async () => {
      const res = await api.call<{ success: boolean; qr: string; base64: string }>(
        "GET",
        `/api/sessions/${id}/qr`,
      );
      return res.status === 200 ? res.body : undefined;
    },
    20_000,
    `a QR for ${id}`,
  );
}

async function createAndConnect(id: string) {
  expect((await api.call("POST", "/api/sessions", { name: id, sessionId: id })).status).toBe(200);
  expect((await api.call("POST", `/api/sessions/${id}/start`)).status).toBe(200);
  await qrOf(id);
  expect((await api.call("POST", `/api/sessions/${id}/simulate/scan`)).status).toBe(200);
  return inState(id, "connected");
}

describe("session lifecycle on the simulator", () => {
  it("create → start → QR (a real PNG) → scan → Connected with me", async () => {
    expect((await api.call("POST", "/api/sessions", { name: "Phone", sessionId: "phone" })).status).toBe(200);
    expect(await detail("phone")).toMatchObject({ status: "Disconnected", state: "stopped" });
    expect((await api.call("POST", "/api/sessions/phone/start")).status).toBe(200);
    const qr = await qrOf("phone");
    expect(qr.success).toBe(true);
    expect(qr.qr.length).toBeGreaterThan(10);
    const image = decodePngDataUrl(qr.base64);
    expect(image.width).toBeGreaterThan(20);
    expect((await api.call("POST", "/api/sessions/phone/simulate/scan")).status).toBe(200);
    const connected = await inState("phone", "connected");
    expect(connected).toMatchObject({ status: "Connected", hasInstance: true });
    expect(connected.me?.id).toMatch(/^\d{12}@s\.whatsapp\.net$/);
    expect((await api.call("GET", "/api/sessions/phone/qr")).status).toBe(400);
  });

  it("stop keeps the link credentials: start again connects without a QR", async () => {
    const before = await createAndConnect("keeper");
    expect((await api.call("POST", "/api/sessions/keeper/stop")).status).toBe(200);
    expect(await detail("keeper")).toMatchObject({
      status: "Disconnected",
      state: "stopped",
      hasInstance: false,
    });
    expect((await api.call("POST", "/api/sessions/keeper/start")).status).toBe(200);
    const again = await inState("keeper", "connected");
    expect(again.me?.id).toBe(before.me?.id);
  });

  it("restart reconnects the same account", async () => {
    const before = await createAndConnect("restarter");
    expect((await api.call("POST", "/api/sessions/restarter/restart")).status).toBe(200);
    const after = await inState("restarter", "connected");
    expect(after.me?.id).toBe(before.me?.id);
  });

  it("logout unlinks: the next start asks for a new QR", async () => {
    await createAndConnect("leaver");
    expect((await api.call("POST", "/api/sessions/leaver/logout")).status).toBe(200);
    expect(await detail("leaver")).toMatchObject({ status: "Disconnected", state: "logged_out", me: null });
    expect((await api.call("POST", "/api/sessions/leaver/start")).status).toBe(200);
    await inState("leaver", "scan_qr");
  });

  it("pair returns an 8-character code while a QR is showing", async () => {
    expect((await api.call("POST", "/api/sessions", { name: "pairing", sessionId: "pairing" })).status).toBe(
      200,
    );
    await api.call("POST", "/api/sessions/pairing/start");
    await qrOf("pairing");
    const res = await api.call<Envelope<{ pairingCode: string }>>("POST", "/api/sessions/pairing/pair", {
      phoneNumber: "628123456789",
    });
    expect(res.status).toBe(200);
    expect(res.body.data.pairingCode).toMatch(/^[A-Z0-9]{8}$/);
  });

  it("a 401 from WhatsApp logs the session out; a 440 fails it without a reconnect loop", async () => {
    await createAndConnect("unlinked");
    await api.call("POST", "/api/sessions/unlinked/simulate/disconnect", { code: 401 });
    expect(await inState("unlinked", "logged_out")).toMatchObject({ status: "Disconnected", me: null });

    await createAndConnect("replaced");
    await api.call("POST", "/api/sessions/replaced/simulate/disconnect", { code: 440 });
    expect(await inState("replaced", "failed")).toMatchObject({ status: "Disconnected" });
  });

  it("a 428 (connection lost) reconnects by itself", async () => {
    const before = await createAndConnect("flaky");
    await api.call("POST", "/api/sessions/flaky/simulate/disconnect", { code: 428 });
    const after = await inState("flaky", "connected");
    expect(after.me?.id).toBe(before.me?.id);
  });

  it("delete logs out and removes the session", async () => {
    await createAndConnect("doomed");
    const res = await api.call("DELETE", "/api/sessions/doomed/settings");
    expect(res.body).toEqual({ status: true, message: "Session deleted successfully", data: null });
    expect((await api.call("GET", "/api/sessions/doomed")).status).toBe(404);
  });
});
