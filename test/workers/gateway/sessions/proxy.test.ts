// A proxy per session (issue 29, ban-risk controls): the owner sets `socks5://…` or `http://…`; it is
// sealed at rest (bound to the session), shown without credentials, handed to the bridge that holds the
// session in its welcome, and a running session restarts through a new one at once.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { connectedSession, ownedSession } from "../../connected-session";
import type { FakeBridge, Link } from "../../fake-bridge";
import { asKey, call, createUser, generateKey } from "../../helpers";

type ProxyAnswer = { data: { proxy: string | null; state: string }; error?: string };
type Detail = { data: { proxy: string | null } };

const WITH_CREDENTIALS = "socks5://gateway-user:hunter2-secret@127.0.0.1:1080";

async function detailProxy(slug: string, key: string): Promise<string | null> {
  const detail = await call<Detail>("GET", `/api/sessions/${slug}`, { headers: asKey(key) });
  expect(detail.status).toBe(200);
  return detail.body.data.proxy;
}

/** The bridge's `count`th assignment of the session (a restart assigns it anew), then its welcome. */
async function holdOnceReassigned(bridge: FakeBridge, sessionId: string, count: number) {
  await bridge.fleet.next(() => bridge.assignments().filter((id) => id === sessionId).length >= count);
  return bridge.hold(sessionId);
}

/** Answers the edge's next `stop` command on `link`, as a bridge does. */
async function answerStop(link: Link): Promise<void> {
  const stop = await link.next((f) => f.type === "command" && f.name === "stop");
  link.send({ type: "result", epoch: 1, id: stop.id, ok: true });
}

describe("PUT/DELETE /api/sessions/{id}/proxy", () => {
  it("stores the proxy sealed, shows it without credentials, and hands it whole to the bridge", async () => {
    const session = await ownedSession("proxied");
    const set = await call<ProxyAnswer>("PUT", `/api/sessions/${session.slug}/proxy`, {
      headers: asKey(session.key),
      body: { url: WITH_CREDENTIALS },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.data).toEqual({ proxy: "socks5://127.0.0.1:1080", state: "stopped" });
    expect(JSON.stringify(set.body)).not.toContain("hunter2");
    expect(await detailProxy(session.slug, session.key)).toBe("socks5://127.0.0.1:1080");

    // At rest: a box, bound to this session, never the URL.
    const sealed = await runInDurableObject(env.SESSION.getByName(session.id), (_, state) =>
      state.storage.sql.exec<{ sealed: string }>("SELECT sealed FROM proxy").one(),
    );
    expect(sealed.sealed).toMatch(/^v1\./);
    expect(sealed.sealed).not.toContain("hunter2");

    const connected = await connectedSession("direct", "15550007001@s.whatsapp.net");
    expect(await detailProxy(connected.slug, connected.key)).toBeNull();
  });

  it("a running session restarts through the new proxy: the next welcome carries it", async () => {
    const session = await connectedSession("switches proxy", "15550007002@s.whatsapp.net");
    const setting = call<ProxyAnswer>("PUT", `/api/sessions/${session.slug}/proxy`, {
      headers: asKey(session.key),
      body: { url: "http://u:p4ss@10.0.0.9:3128" },
    });
    await answerStop(session.link);
    const held = await holdOnceReassigned(session.bridge, session.id, 2);
    if (!("welcome" in held)) throw new Error(`hold refused: ${held.status}`);
    expect(held.welcome.proxy).toBe("http://u:p4ss@10.0.0.9:3128");
    expect(held.welcome.desired).toBe("running");
    const set = await setting;
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.data.proxy).toBe("http://10.0.0.9:3128");

    // Removed: the next start is direct again.
    const removing = call<ProxyAnswer>("DELETE", `/api/sessions/${session.slug}/proxy`, {
      headers: asKey(session.key),
    });
    await answerStop(held.link);
    const again = await holdOnceReassigned(session.bridge, session.id, 3);
    if (!("welcome" in again)) throw new Error(`hold refused: ${again.status}`);
    expect(again.welcome.proxy).toBeNull();
    expect((await removing).body.data.proxy).toBeNull();
  });

  it.each([
    ["ftp://u:hunter2@127.0.0.1:21", "proxy scheme must be one of socks5, socks5h, socks4, http"],
    ["socks5://127.0.0.1", "proxy needs a host and a port"],
    ["http://u:hunter2@127.0.0.1:3128/path", "proxy URL takes no path, query or fragment"],
    ["hunter2 not a url", "proxy is not a URL"],
  ])("refuses %s with 400, says why without echoing it, and keeps the old proxy", async (url, why) => {
    const session = await ownedSession("bad proxy");
    await call("PUT", `/api/sessions/${session.slug}/proxy`, {
      headers: asKey(session.key),
      body: { url: "socks5h://127.0.0.1:9050" },
    });
    const refused = await call<ProxyAnswer>("PUT", `/api/sessions/${session.slug}/proxy`, {
      headers: asKey(session.key),
      body: { url },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain(why);
    expect(JSON.stringify(refused.body)).not.toContain("hunter2");
    expect(await detailProxy(session.slug, session.key)).toBe("socks5h://127.0.0.1:9050");
  });

  it("refuses wrong shapes, another tenant (404) and anyone but the owner (403)", async () => {
    const session = await ownedSession("guarded proxy");
    const path = `/api/sessions/${session.slug}/proxy`;
    const bodies: unknown[] = [{}, { url: 1080 }, { url: "socks5://h:1", extra: true }, "socks5://h:1"];
    for (const body of bodies) {
      expect((await call("PUT", path, { headers: asKey(session.key), body })).status).toBe(400);
    }
    const stranger = await generateKey(await createUser("OWNER"));
    const other = await call("PUT", path, {
      headers: asKey(stranger),
      body: { url: "socks5://127.0.0.1:1" },
    });
    expect(other.status).toBe(404);
    expect((await call("DELETE", path, { headers: asKey(stranger) })).status).toBe(404);

    const operator = await createUser("OWNER");
    const shared = await call("POST", `/api/sessions/${session.slug}/access`, {
      headers: asKey(session.key),
      body: { email: operator.email, role: "operator" },
    });
    expect(shared.status).toBe(201);
    const byOperator = await call("PUT", path, {
      headers: asKey(await generateKey(operator)),
      body: { url: "socks5://127.0.0.1:1" },
    });
    expect(byOperator.status).toBe(403);
    expect(await detailProxy(session.slug, session.key)).toBeNull();
  });
});
