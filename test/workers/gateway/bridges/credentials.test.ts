// Issue 18, bridge identity: one shared BRIDGE_TOKEN opened every tenant's sessions (a process that
// dialled as another bridge got that user's WhatsApp auth state) and bridges with the same id kicked
// each other off forever. Each bridge now has its own credential, bound to its id.
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { ownedSession } from "../../connected-session";
import {
  BOOTSTRAP_BRIDGE_ID,
  BRIDGE_TOKEN,
  dial,
  emit,
  FakeBridge,
  issueBridgeCredential,
} from "../../fake-bridge";
import { asKey, asSession, call, createUser, generateKey, rootSession } from "../../helpers";
import { PATIENCE_MS } from "../../patience";

type Bridge = {
  id: string;
  tokenPrefix: string;
  connected: boolean;
  sessions: number;
  revokedAt: string | null;
};
type Detail = { status: string; state: string; hasInstance: boolean };

const opened: FakeBridge[] = [];
afterEach(() => {
  for (const bridge of opened.splice(0)) bridge.fleet?.socket.close(1001, "test done");
});

async function liveBridge(held: string[] = [], bridge = new FakeBridge()): Promise<FakeBridge> {
  opened.push(bridge);
  return bridge.connect(held);
}

async function asRoot() {
  return asSession(await rootSession());
}

const listBridges = async () =>
  (await call<{ data: Bridge[] }>("GET", "/api/bridges", { headers: await asRoot() })).body.data;

const detail = async (key: string, slug: string) =>
  (await call<{ data: Detail }>("GET", `/api/sessions/${slug}`, { headers: asKey(key) })).body.data;

const fleetStub = () => env.FLEET.getByName("global");

/** A started session held, connected, by a fresh bridge (the only one live, so it gets the lease). */
async function heldSession(name: string) {
  const bridge = await liveBridge();
  const session = await ownedSession(name);
  const started = await call("POST", `/api/sessions/${session.slug}/start`, { headers: asKey(session.key) });
  expect(started.status).toBe(200);
  await bridge.waitForAssign(session.id);
  const held = await bridge.hold(session.id);
  if (!("link" in held)) throw new Error(`could not hold: ${held.status}`);
  await emit(held.link, 1, 1, { kind: "auth", creds: { registered: true }, keys: {} });
  await emit(held.link, 1, 2, { kind: "connected", me: { id: "628100@s.whatsapp.net" } });
  return { holder: { bridge, link: held.link }, session };
}

describe("bridge credentials (SUPERADMIN)", () => {
  it("are shown once, kept as a SHA-256 digest, listed without the token, and revoked", async () => {
    const headers = await asRoot();
    const created = await call<{ data: { token: string; bridge: Bridge } }>("POST", "/api/bridges", {
      body: { id: "bridge-eu-1" },
      headers,
    });
    expect(created.status).toBe(201);
    const { token, bridge } = created.body.data;
    expect(token).toMatch(/^swbr_[0-9A-Za-z]{49}$/);
    expect(bridge).toMatchObject({ id: "bridge-eu-1", connected: false, sessions: 0, revokedAt: null });
    expect(token.startsWith(bridge.tokenPrefix)).toBe(true);

    const stored = await env.DB.prepare("SELECT * FROM bridge_credentials WHERE id = ?")
      .bind("bridge-eu-1")
      .first();
    expect(JSON.stringify(stored)).not.toContain(token);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
    expect(stored?.token_hash).toBe(
      [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join(""),
    );

    const listed = await call("GET", "/api/bridges", { headers });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(token);

    const again = await call("POST", "/api/bridges", { body: { id: "bridge-eu-1" }, headers });
    expect(again.status).toBe(409);

    expect((await call("DELETE", "/api/bridges/bridge-eu-1", { headers })).status).toBe(200);
    expect((await call("DELETE", "/api/bridges/bridge-eu-1", { headers })).status).toBe(404);
    expect((await dial("/bridge/v1/fleet?bridge=bridge-eu-1&capacity=5", token)).status).toBe(401);

    const renewed = await call<{ data: { token: string } }>("POST", "/api/bridges", {
      body: { id: "bridge-eu-1" },
      headers,
    });
    expect(renewed.status).toBe(201);
    expect(renewed.body.data.token).not.toBe(token);
  });

  it("refuses other roles, bad ids and the bootstrap id, changing nothing", async () => {
    const owner = await createUser("OWNER");
    const ownerKey = await generateKey(owner);
    const post = (body: unknown, headers: Record<string, string>) =>
      call("POST", "/api/bridges", { body, headers });
    expect((await post({ id: "mine" }, asKey(ownerKey))).status).toBe(403);
    expect((await call("GET", "/api/bridges", { headers: asKey(ownerKey) })).status).toBe(403);
    expect((await call("POST", "/api/bridges", { body: { id: "x" } })).status).toBe(401);
    const headers = await asRoot();
    expect((await post({ id: "bad id" }, headers)).status).toBe(400);
    expect((await post({ id: "a".repeat(65) }, headers)).status).toBe(400);
    expect((await post({ id: "b", extra: 1 }, headers)).status).toBe(400);
    expect((await post({ id: BOOTSTRAP_BRIDGE_ID }, headers)).status).toBe(400);
    expect((await call("DELETE", "/api/bridges/never-made", { headers })).status).toBe(404);
    const ids = (await listBridges()).map((bridge) => bridge.id);
    for (const refused of ["mine", "x", "bad id", "b", BOOTSTRAP_BRIDGE_ID])
      expect(ids).not.toContain(refused);
  });
});

describe("a bridge can only be itself", () => {
  it("a credential opens only its own id; BRIDGE_TOKEN only the local bridge", async () => {
    const tokenA = await issueBridgeCredential("bridge-a");
    await issueBridgeCredential("bridge-b");
    expect((await dial("/bridge/v1/fleet?bridge=bridge-b&capacity=5", tokenA)).status).toBe(403);
    expect((await dial(`/bridge/v1/fleet?bridge=${BOOTSTRAP_BRIDGE_ID}&capacity=5`, tokenA)).status).toBe(
      403,
    );
    expect((await dial("/bridge/v1/fleet?bridge=bridge-b&capacity=5", BRIDGE_TOKEN)).status).toBe(403);

    const local = await liveBridge([], new FakeBridge(BOOTSTRAP_BRIDGE_ID, 100, BRIDGE_TOKEN));
    expect(local.fleet.closed).toBeNull();
  });

  it("a bridge that does not hold a session gets neither its auth state nor its media", async () => {
    const { holder, session } = await heldSession("Held");
    const intruder = await liveBridge();
    const auth = { Authorization: `Bearer ${await intruder.credential()}` };

    // Claiming the holder's id with its own credential: 403. Dialling as itself: no lease, 409.
    const claimed = await dial(
      `/bridge/v1/sessions/${session.id}?bridge=${holder.bridge.id}`,
      auth.Authorization.slice(7),
    );
    expect(claimed.status).toBe(403);
    expect(await intruder.hold(session.id)).toEqual({ status: 409 });
    const media = `/bridge/v1/sessions/${session.id}/media/abcdefgh12`;
    expect((await call("GET", media, { headers: auth })).status).toBe(409);
    const put = await call("PUT", media, {
      headers: { ...auth, "Content-Type": "image/png" },
      rawBody: new Uint8Array([1, 2, 3]),
    });
    expect(put.status).toBe(409);
    const own = await call("GET", media, {
      headers: { Authorization: `Bearer ${await holder.bridge.credential()}` },
    });
    expect(own.status).toBe(404); // past the lease check: there is no such media
    // The records of sent messages (answering resend requests) follow the same rule.
    const sent = `/bridge/v1/sessions/${session.id}/sent/3EB0ABCDEF`;
    expect((await call("GET", sent, { headers: auth })).status).toBe(409);
    const ownSent = await call("GET", sent, {
      headers: { Authorization: `Bearer ${await holder.bridge.credential()}` },
    });
    expect(ownSent.status).toBe(404);
  });
});

describe("one live connection per bridge id", () => {
  it("refuses a second fleet connection with 423 and leaves the first working", async () => {
    const first = await liveBridge();
    const twin = new FakeBridge(first.id, 100, first.token);
    for (let i = 0; i < 5; i++) expect((await twin.dialFleet()).status).toBe(423);
    expect(first.fleet.closed).toBeNull();

    const session = await ownedSession("Still served");
    expect(
      (await call("POST", `/api/sessions/${session.slug}/start`, { headers: asKey(session.key) })).status,
    ).toBe(200);
    await first.waitForAssign(session.id);
    const held = await first.hold(session.id);
    expect("link" in held).toBe(true);
    expect(await first.hold(session.id)).toEqual({ status: 423 });
    if ("link" in held) expect(held.link.closed).toBeNull();
  });
});

describe("a bridge's redial while the edge still holds its previous link", () => {
  it("replaces that link when the same process dials again (same instance); a twin is still refused", async () => {
    const bridge = new FakeBridge();
    bridge.instance = "process-a-4f1c2b";
    await liveBridge([], bridge);
    // The process gave this link up (say its handshake timed out while workerd was still starting),
    // but the edge still hears it as live: the redial must not be taken for a second bridge.
    const abandoned = bridge.fleet;
    await bridge.connect([]);
    expect(await abandoned.closedWith()).toMatchObject({ code: 1001 });

    const twin = new FakeBridge(bridge.id, 100, bridge.token);
    twin.instance = "process-b-9d0e7a";
    expect((await twin.dialFleet()).status).toBe(423);
    const unnamed = new FakeBridge(bridge.id, 100, bridge.token);
    expect((await unnamed.dialFleet()).status).toBe(423);
    expect(bridge.fleet.closed).toBeNull();

    const session = await ownedSession("Served after the redial");
    expect(
      (await call("POST", `/api/sessions/${session.slug}/start`, { headers: asKey(session.key) })).status,
    ).toBe(200);
    await bridge.waitForAssign(session.id);
  });
});

describe("revoking a bridge", () => {
  it("disconnects it at once and moves its sessions to another bridge; its next dial is 401", async () => {
    const { holder, session } = await heldSession("Moving");
    const doomed = holder.bridge;
    const heir = await liveBridge();

    const revoked = await call<{ data: Bridge }>("DELETE", `/api/bridges/${doomed.id}`, {
      headers: await asRoot(),
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toMatchObject({ id: doomed.id, connected: false, sessions: 0 });
    expect((await doomed.fleet.closedWith()).code).toBe(4003);
    await heir.waitForAssign(session.id); // at once, not after the grace period
    expect((await doomed.dialFleet()).status).toBe(401);
    expect(await doomed.hold(session.id)).toEqual({ status: 401 });
    expect(await detail(session.key, session.slug)).toMatchObject({
      state: "reconnecting",
      hasInstance: false,
    });
    const listed = await listBridges();
    expect(listed.find((b) => b.id === doomed.id)?.revokedAt).not.toBeNull();
    // Earlier tests' sessions wait for a bridge too, so the heir may take more than this one.
    expect(listed.find((b) => b.id === heir.id)?.connected).toBe(true);
    expect(listed.find((b) => b.id === heir.id)?.sessions).toBeGreaterThan(0);
  });
});

describe("a bridge that restarts within the grace period", () => {
  it("is given its sessions again under a new lease; Connected only once it reports so", async () => {
    const { holder, session } = await heldSession("Restarted");
    const before = holder.bridge;
    const held = { link: holder.link };
    // The process dies (no 1001: the fleet keeps its sessions for the grace period)...
    opened.splice(opened.indexOf(before), 1);
    before.fleet.socket.close(4000, "killed");
    held.link.socket.close(4000, "killed");
    await expect
      .poll(async () => (await listBridges()).find((b) => b.id === before.id)?.connected, {
        timeout: PATIENCE_MS,
      })
      .toBe(false);
    // ...and the grace period never runs out in this test: only the fix can give the session back.
    await runInDurableObject(fleetStub(), (_, state) => state.storage.deleteAlarm());

    // The new process has the same id and credential and holds nothing yet.
    const after = await liveBridge([], new FakeBridge(before.id, 100, before.token));
    await after.waitForAssign(session.id);
    expect(await detail(session.key, session.slug)).toMatchObject({
      status: "Connecting",
      hasInstance: false,
    });
    const again = await after.hold(session.id);
    if (!("link" in again)) throw new Error(`could not hold again: ${again.status}`);
    expect(again.welcome).toMatchObject({ epoch: 2, auth: { creds: { registered: true } } });
    expect(await detail(session.key, session.slug)).toMatchObject({
      state: "reconnecting",
      hasInstance: true,
    });
    await emit(again.link, 2, 1, { kind: "connected", me: { id: "628300@s.whatsapp.net" } });
    expect(await detail(session.key, session.slug)).toMatchObject({ status: "Connected", hasInstance: true });
  });
});
