// Issue 25 M-a: a revoked share's pairing socket ends at once. The session's viewer sockets of the
// person the share named close within a second (4403) and never see the next QR; the owner's and
// other shares' stay. A role change between viewer and operator keeps the socket: both read the view.
import { describe, expect, it } from "vitest";
import { emit, FakeBridge, Link, QR_IMAGE } from "../../fake-bridge";
import {
  asKey,
  asSession,
  BASE,
  call,
  createUser,
  fetchWorker,
  generateKey,
  rootSession,
} from "../../helpers";
import { newSession, type Owner, owner } from "../webhooks/helpers";

const CUT_WITHIN_MS = 1_000;

async function watch(slug: string, key: string): Promise<Link> {
  const res = await fetchWorker(`${BASE}/api/sessions/${slug}/events`, {
    headers: { Upgrade: "websocket", ...asKey(key) },
  });
  expect(res.status).toBe(101);
  const link = new Link(res.webSocket as WebSocket);
  await link.next((f) => f.type === "session");
  return link;
}

async function share(alice: Owner, slug: string, email: string, role: "viewer" | "operator") {
  const res = await call("POST", `/api/sessions/${slug}/access`, {
    headers: asKey(alice.key),
    body: { email, role },
  });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
}

describe("a revoked share's pairing socket (issue 25 M-a)", () => {
  it("closes within a second and never carries the next QR; the owner's and other shares' stay open", async () => {
    const alice = await owner();
    const bob = await owner("STAFF");
    const carol = await owner("STAFF");
    const session = await newSession(alice.key);
    await share(alice, session.sessionId, bob.email, "operator");
    await share(alice, session.sessionId, carol.email, "viewer");
    const bobs = await watch(session.sessionId, bob.key);
    const carols = await watch(session.sessionId, carol.key);
    const alices = await watch(session.sessionId, alice.key);

    const revoked = await call("DELETE", `/api/sessions/${session.sessionId}/access`, {
      headers: asKey(alice.key),
      body: { email: bob.email },
    });
    expect(revoked.status).toBe(200);
    const closed = await bobs.closedWith(CUT_WITHIN_MS);
    expect(closed.code).toBe(4403);
    expect(closed.reason).toMatch(/share/i);

    // A role change keeps the socket: a viewer and an operator read the same view.
    await share(alice, session.sessionId, carol.email, "operator");
    const bridge = await new FakeBridge().connect();
    await call("POST", `/api/sessions/${session.sessionId}/start`, { headers: asKey(alice.key) });
    await bridge.waitForAssign(session.id);
    const held = await bridge.hold(session.id);
    if (!("link" in held)) throw new Error(`hold failed: ${held.status}`);
    await emit(held.link, 1, 1, { kind: "qr", qr: "after-revocation", image: QR_IMAGE });
    await alices.next((f) => f.qrImage === QR_IMAGE);
    await carols.next((f) => f.qrImage === QR_IMAGE);
    expect(bobs.frames.some((f) => f.qrImage === QR_IMAGE)).toBe(false);
    expect(carols.closed).toBeNull();
    for (const link of [alices, carols, bridge.fleet]) link.socket.close(1000, "done");
  });

  it("a SUPERADMIN demoted to STAFF loses the pairing socket of a session not theirs (4401)", async () => {
    const alice = await owner();
    const session = await newSession(alice.key);
    const admin = await createUser("SUPERADMIN");
    const adminKey = await generateKey(admin);
    const watching = await watch(session.sessionId, adminKey);
    const demoted = await call("PATCH", `/api/users/${admin.userId}`, {
      headers: asSession(await rootSession()),
      body: { role: "STAFF" },
    });
    expect(demoted.status, JSON.stringify(demoted.body)).toBe(200);
    const closed = await watching.closedWith(CUT_WITHIN_MS);
    expect(closed.code).toBe(4401);
    const again = await fetchWorker(`${BASE}/api/sessions/${session.sessionId}/events`, {
      headers: { Upgrade: "websocket", ...asKey(adminKey) },
    });
    // Without access the session is not there at all (ids are not probeable: 404, not 403).
    expect(again.status).toBe(404);
  });
});
