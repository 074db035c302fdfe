// The WhatsApp Web version a session connected with (issue 29, "Version"): the SessionDO keeps what
// the bridge reports with `connected`, shows it in the session's detail and on its page, and hands it
// back in the welcome so a bridge that cannot read the current version (offline) announces that one.
import { describe, expect, it } from "vitest";
import { connect, connectedSession, ownedSession } from "../../connected-session";
import { browse, textOf } from "../../dashboard/helpers";
import { emit, relink } from "../../fake-bridge";
import { asKey, call, createUser, generateKey } from "../../helpers";

type Detail = { data: { waVersion: { version: string; source: string } | null } };

describe("the WhatsApp Web version of a session", () => {
  it("is null until a socket connects with one, then shown, kept, and handed back in the welcome", async () => {
    const fresh = await ownedSession("never-connected");
    const before = await call<Detail>("GET", `/api/sessions/${fresh.slug}`, { headers: asKey(fresh.key) });
    expect(before.status).toBe(200);
    expect(before.body.data.waVersion).toBeNull();

    const session = await connectedSession("versioned", "15550003333@s.whatsapp.net");
    await emit(session.link, 1, 2, {
      kind: "connected",
      me: { id: "15550003333@s.whatsapp.net" },
      waVersion: { version: "2.3000.1043857767", source: "fetched" },
    });
    const detail = await call<Detail>("GET", `/api/sessions/${session.slug}`, {
      headers: asKey(session.key),
    });
    expect(detail.body.data.waVersion).toEqual({ version: "2.3000.1043857767", source: "fetched" });

    const relinked = await relink(session.bridge, session.id);
    if (!("welcome" in relinked)) throw new Error(`relink refused: ${relinked.status}`);
    expect(relinked.welcome.waVersion).toBe("2.3000.1043857767");
  });

  it("the session page says which version and where it came from", async () => {
    const user = await createUser("OWNER");
    const key = await generateKey(user);
    const created = await call<{ data: { id: string; sessionId: string } }>("POST", "/api/sessions", {
      body: { name: "versioned-page" },
      headers: asKey(key),
    });
    const { id, sessionId: slug } = created.body.data;
    const session = await connect({ key, userId: user.userId, id, slug }, "15550004444@s.whatsapp.net");
    await emit(session.link, 1, 2, {
      kind: "connected",
      me: { id: "15550004444@s.whatsapp.net" },
      waVersion: { version: "2.3000.1043857768", source: "edge" },
    });
    const page = await browse(user, `/sessions/${session.slug}`);
    expect(textOf(page.html)).toContain(
      "WhatsApp Web version 2.3000.1043857768 (the last that connected; the current one could not be read)",
    );
  });
});
