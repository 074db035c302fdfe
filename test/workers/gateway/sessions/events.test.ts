// GET /api/sessions/:id/events: the live view the dashboard's pairing page listens to.
import { describe, expect, it } from "vitest";
import { connectedSession, ownedSession } from "../../connected-session";
import { emit, FakeBridge, Link, QR_IMAGE } from "../../fake-bridge";
import { asKey, asSession, BASE, call, createUser, fetchWorker, generateKey, login } from "../../helpers";

async function watch(slug: string, headers: Record<string, string>): Promise<Response> {
  return fetchWorker(`${BASE}/api/sessions/${slug}/events`, {
    headers: { Upgrade: "websocket", ...headers },
  });
}

describe("session events socket", () => {
  it("sends the view at once, every new QR, then Connected with me; a lost bridge link keeps viewers", async () => {
    const session = await ownedSession("watched");
    const res = await watch(session.slug, asKey(session.key));
    expect(res.status).toBe(101);
    const viewer = new Link(res.webSocket as WebSocket);
    expect(await viewer.next((f) => f.type === "session")).toMatchObject({ state: "stopped", qrImage: null });

    const bridge = await new FakeBridge().connect();
    await call("POST", `/api/sessions/${session.slug}/start`, { headers: asKey(session.key) });
    await bridge.waitForAssign(session.id);
    const held = await bridge.hold(session.id);
    if (!("link" in held)) throw new Error(`hold failed: ${held.status}`);
    await emit(held.link, 1, 1, { kind: "qr", qr: "first", image: QR_IMAGE });
    await viewer.next((f) => f.state === "scan_qr" && f.qrImage === QR_IMAGE);
    await emit(held.link, 1, 2, { kind: "qr", qr: "second", image: `${QR_IMAGE}2` });
    await viewer.next((f) => f.qrImage === `${QR_IMAGE}2`);
    await emit(held.link, 1, 3, {
      kind: "connected",
      me: { id: "15550001111:1@s.whatsapp.net", name: "Ada" },
    });
    const connected = await viewer.next((f) => f.state === "connected");
    expect(connected).toMatchObject({ status: "Connected", qrImage: null, me: { name: "Ada" } });
    // Losing the bridge link is news for the viewer, not the end of its socket.
    held.link.socket.close(1001, "bridge going away");
    await viewer.next((f) => f.state === "reconnecting");
    expect(viewer.closed).toBeNull();
    bridge.fleet.socket.close(1000, "done");
    viewer.socket.close(1000, "done");
  });

  it("the account's own name changed while connected (`me` event) is the session's `me`, live and stored", async () => {
    const session = await connectedSession("renamed", "15550002222:1@s.whatsapp.net");
    const res = await watch(session.slug, asKey(session.key));
    const viewer = new Link(res.webSocket as WebSocket);
    await viewer.next((f) => f.type === "session" && f.state === "connected");
    await emit(session.link, 1, 2, {
      kind: "me",
      me: { id: "15550002222:1@s.whatsapp.net", name: "Front Desk" },
    });
    const renamed = await viewer.next((f) => (f.me as { name?: string } | null)?.name === "Front Desk");
    expect(renamed).toMatchObject({ state: "connected", status: "Connected" });
    const detail = await call<{ data: { me: unknown; status: string } }>(
      "GET",
      `/api/sessions/${session.slug}`,
      {
        headers: asKey(session.key),
      },
    );
    expect(detail.body.data).toMatchObject({
      status: "Connected",
      me: { id: "15550002222:1@s.whatsapp.net", name: "Front Desk" },
    });
    viewer.socket.close(1000, "done");
  });

  it("works with the dashboard cookie, refuses a cross-site Origin and other tenants", async () => {
    const session = await ownedSession("cookie-watched");
    const mallory = await createUser("OWNER");
    const malloryKey = await generateKey(mallory);
    expect((await watch(session.slug, asKey(malloryKey))).status).toBe(404); // as for a session that does not exist
    expect((await watch("no-such-session", asKey(session.key))).status).toBe(404);
    expect((await watch(session.slug, {})).status).toBe(401);
    const plain = await fetchWorker(`${BASE}/api/sessions/${session.slug}/events`, {
      headers: asKey(session.key),
    });
    expect(plain.status).toBe(200); // a plain GET reads the event log (event-log.test.ts)
    const crossSite = await watch(session.slug, { ...asKey(session.key), Origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);

    const web = await login(mallory.email, mallory.password);
    const sameSite = await watch(session.slug, { ...asSession(web), Origin: BASE });
    expect(sameSite.status).toBe(404); // a cookie is a caller like any other: still not her session
  });
});
