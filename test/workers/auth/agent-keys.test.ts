import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { AGENT_READ_TTL_MS } from "../../../workers/auth/agent-key-reads";
import { keyringTagFor } from "../../../workers/auth/api-key-format";
import { keyringShard } from "../../../workers/auth/keyring";
import { boardUser, seedAgent, seedCompany } from "../control/helpers";
import { call } from "../helpers";

type ControlError = { error: string; code?: string };

describe("control-plane callers", () => {
  it("an agent key opens its own company and nothing else", async () => {
    const owner = await boardUser();
    const mine = await seedCompany(owner);
    const theirs = await seedCompany(await boardUser());
    const agent = await seedAgent(mine.id);

    const own = await call<{ id: string }>("GET", `/api/companies/${mine.id}`, { headers: agent.headers });
    expect(own.status).toBe(200);
    expect(own.body.id).toBe(mine.id);

    const other = await call<ControlError>("GET", `/api/companies/${theirs.id}`, { headers: agent.headers });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe("not_found");
  });

  it("a board user sees only the companies they are a member of", async () => {
    const owner = await boardUser();
    const outsider = await boardUser();
    const company = await seedCompany(owner);
    expect((await call("GET", `/api/companies/${company.id}`, { headers: owner.headers })).status).toBe(200);
    expect((await call("GET", `/api/companies/${company.id}`, { headers: outsider.headers })).status).toBe(
      404,
    );
  });

  it("answers 401 in the control envelope for missing, malformed and unknown agent keys", async () => {
    const company = await seedCompany(await boardUser());
    for (const authorization of [
      undefined,
      "Bearer nonsense",
      `Bearer swa_${"A".repeat(43)}`,
      "Basic dXNlcjpwYXNz",
    ]) {
      const headers: Record<string, string> = authorization ? { Authorization: authorization } : {};
      const res = await call<ControlError>("GET", `/api/companies/${company.id}`, { headers });
      expect(res.status, authorization).toBe(401);
      expect(res.body.code).toBe("unauthorized");
      expect(typeof res.body.error).toBe("string");
    }
  });

  it("refuses revoked keys and keys of pending or terminated agents", async () => {
    const company = await seedCompany(await boardUser());
    const revoked = await seedAgent(company.id);
    await env.DB.prepare("UPDATE agent_api_keys SET revoked_at = ? WHERE agent_id = ?")
      .bind(Date.now(), revoked.id)
      .run();
    const pending = await seedAgent(company.id, { status: "pending_approval" });
    const terminated = await seedAgent(company.id, { status: "terminated" });
    for (const agent of [revoked, pending, terminated]) {
      const res = await call("GET", `/api/companies/${company.id}`, { headers: agent.headers });
      expect(res.status).toBe(401);
    }
  });

  it("a key revoked by another isolate stops writes at once and reads within AGENT_READ_TTL_MS", async () => {
    const company = await seedCompany(await boardUser());
    const agent = await seedAgent(company.id);
    const read = () => call("GET", `/api/companies/${company.id}`, { headers: agent.headers });
    expect((await read()).status).toBe(200);

    // What another isolate's revocation leaves behind: the row and the Keyring, not this isolate.
    await env.DB.prepare("UPDATE agent_api_keys SET revoked_at = ? WHERE agent_id = ?")
      .bind(Date.now(), agent.id)
      .run();
    await keyringShard(env, await keyringTagFor(agent.id)).invalidateAgent(agent.id);

    const write = await call<ControlError>("POST", `/api/companies/${company.id}/issues`, {
      headers: agent.headers,
      body: { title: "after revocation" },
    });
    expect(write.status).toBe(401);
    const written = await env.DB.prepare("SELECT count(*) AS n FROM issues WHERE company_id = ?")
      .bind(company.id)
      .first<{ n: number }>();
    expect(written?.n).toBe(0);
    // The write asked the Keyring and was refused: this isolate's reads are refused from then on too.
    expect((await read()).status).toBe(401);

    // A read-only caller of the revoked key, in an isolate that never wrote with it, is refused once
    // its remembered answer expires.
    const reader = await seedAgent(company.id);
    const readAsReader = () => call("GET", `/api/companies/${company.id}`, { headers: reader.headers });
    expect((await readAsReader()).status).toBe(200);
    await env.DB.prepare("UPDATE agent_api_keys SET revoked_at = ? WHERE agent_id = ?")
      .bind(Date.now(), reader.id)
      .run();
    await keyringShard(env, await keyringTagFor(reader.id)).invalidateAgent(reader.id);
    const readerRevokedAt = Date.now();
    const soon = await readAsReader();
    if (Date.now() - readerRevokedAt < AGENT_READ_TTL_MS) expect(soon.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, AGENT_READ_TTL_MS + 50));
    expect((await readAsReader()).status).toBe(401);
  });

  it("never accepts an agent key on the messaging gateway, nor in X-API-Key", async () => {
    const company = await seedCompany(await boardUser());
    const agent = await seedAgent(company.id);
    const gateway = await call<{ status: boolean }>("GET", "/api/sessions", { headers: agent.headers });
    expect(gateway.status).toBe(401);
    expect(gateway.body.status).toBe(false);
    const asUserKey = await call("GET", `/api/companies/${company.id}`, {
      headers: { "X-API-Key": agent.key },
    });
    expect(asUserKey.status).toBe(401);
  });

  it("records when an agent key was last used", async () => {
    const company = await seedCompany(await boardUser());
    const agent = await seedAgent(company.id);
    expect((await call("GET", `/api/companies/${company.id}`, { headers: agent.headers })).status).toBe(200);
    await expect
      .poll(async () =>
        env.DB.prepare("SELECT last_used_at AS t FROM agent_api_keys WHERE agent_id = ?")
          .bind(agent.id)
          .first<{ t: number | null }>()
          .then((row) => row?.t ?? null),
      )
      .not.toBeNull();
  });
});
