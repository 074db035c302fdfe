// The Session resource lists its webhooks: GET /sessions and GET /sessions/{id}.
import { describe, expect, it } from "vitest";
import { asKey, call } from "../../helpers";
import { createWebhook, type Envelope, newSession, ownerWithSession } from "./helpers";

describe("the Session resource's webhooks", () => {
  it("lists the session's own and the owner's global webhooks, never a secret, in GET /sessions and the detail", async () => {
    const { alice, session } = await ownerWithSession();
    const other = await newSession(alice.key);
    const own = await createWebhook(alice.key, session, { name: "Own" });
    const global = await createWebhook(alice.key, other, { name: "Everywhere", global: true });
    await createWebhook(alice.key, other, { name: "Other session only" });

    const detail = await call<Envelope<{ webhooks: { id: string }[] }>>(
      "GET",
      `/api/sessions/${session.sessionId}`,
      {
        headers: asKey(alice.key),
      },
    );
    expect(detail.body.data.webhooks.map((w) => w.id).sort()).toEqual([own.id, global.id].sort());
    expect(JSON.stringify(detail.body)).not.toContain("secret");

    const listed = await call<Envelope<{ sessionId: string; webhooks: { id: string; name: string }[] }[]>>(
      "GET",
      "/api/sessions",
      { headers: asKey(alice.key) },
    );
    const byName = (slug: string) =>
      listed.body.data
        .find((s) => s.sessionId === slug)
        ?.webhooks.map((w) => w.name)
        .sort();
    expect(byName(session.sessionId)).toEqual(["Everywhere", "Own"]);
    expect(byName(other.sessionId)).toEqual(["Everywhere", "Other session only"]);
  });
});
