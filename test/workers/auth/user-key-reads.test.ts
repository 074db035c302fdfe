// User API keys on the hot path: a repeated read is answered from the isolate's last Keyring answer
// (workers/auth/user-key-reads.ts), a write always asks the Keyring, and revocation stops writes at
// once and reads within USER_READ_TTL_MS.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { keyringTagFor } from "../../../workers/auth/api-key-format";
import { keyringShard } from "../../../workers/auth/keyring";
import { USER_READ_TTL_MS } from "../../../workers/auth/user-key-reads";
import { MEMBERSHIP_TTL_MS } from "../../../workers/control/shared/memberships";
import { boardUser, seedCompany, seedIssue } from "../control/helpers";
import { asKey, asSession, BASE, createUser, dispatch, generateKey } from "../helpers";

/**
 * The Worker's own fetch, given bindings whose Keyring namespace counts the stubs asked for: every
 * question to a Keyring shard starts with one `getByName`. Only the platform binding is wrapped.
 */
function countingKeyring() {
  const keyring = env.KEYRING;
  const counter = { asked: 0 };
  const KEYRING = new Proxy(keyring, {
    get(target, property) {
      if (property === "getByName") {
        return (name: string) => {
          counter.asked++;
          return target.getByName(name);
        };
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const bindings = { ...env, KEYRING };
  const send = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const init: RequestInit = { method, headers: { ...headers, "content-type": "application/json" } };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await dispatch(new Request(`${BASE}${path}`, init), bindings);
    await response.body?.cancel();
    return response.status;
  };
  return { counter, send };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What another isolate's revocation leaves behind: the row gone and the Keyring told, not this isolate. */
async function revokeElsewhere(userId: string): Promise<void> {
  await env.DB.prepare("DELETE FROM api_keys WHERE user_id = ?").bind(userId).run();
  await keyringShard(env, await keyringTagFor(userId)).invalidate(userId);
}

describe("user API keys on reads", () => {
  it("a repeated read with a user key does not ask the Keyring again, nor a guarded write; another write or an upgrade always does", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const issue = await seedIssue(company);
    const { counter, send } = countingKeyring();

    expect(await send("GET", `/api/issues/${issue.id}`, owner.headers)).toBe(200);
    const afterFirst = counter.asked;
    expect(afterFirst).toBe(1);
    expect(await send("GET", `/api/issues/${issue.id}`, owner.headers)).toBe(200);
    expect(await send("GET", `/api/companies/${company.id}`, owner.headers)).toBe(200);
    expect(counter.asked).toBe(afterFirst);

    // An issue's update checks the key in its own commit (auth/credential-guard.ts).
    const patched = await send("PATCH", `/api/issues/${issue.id}`, owner.headers, { title: "renamed" });
    expect(patched).toBe(200);
    expect(counter.asked).toBe(afterFirst);

    const renamed = await send("PATCH", `/api/companies/${company.id}`, owner.headers, { description: "d" });
    expect(renamed).toBe(200);
    expect(counter.asked).toBe(afterFirst + 1);

    // A WebSocket opened by a GET outlives the request: it asks like a write, whatever it answers.
    await send("GET", `/api/companies/${company.id}`, { ...owner.headers, Upgrade: "websocket" });
    expect(counter.asked).toBe(afterFirst + 2);
  });

  it("revoking a key through the API refuses its next read and write at once", async () => {
    const session = await createUser("OWNER");
    const key = await generateKey(session);
    const owner = { userId: session.userId, key, headers: asKey(key) };
    const company = await seedCompany(owner);
    const { send } = countingKeyring();
    expect(await send("GET", `/api/companies/${company.id}`, owner.headers)).toBe(200);

    expect(await send("DELETE", "/api/user/api-key", asSession(session))).toBe(200);

    expect(await send("GET", `/api/companies/${company.id}`, owner.headers)).toBe(401);
    expect(await send("POST", `/api/companies/${company.id}/issues`, owner.headers, { title: "no" })).toBe(
      401,
    );
  });

  it("a key revoked by another isolate stops writes at once and reads within USER_READ_TTL_MS", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const { send } = countingKeyring();
    const read = () => send("GET", `/api/companies/${company.id}`, owner.headers);
    expect(await read()).toBe(200);

    await revokeElsewhere(owner.userId);
    const revokedAt = Date.now();
    const soon = await read();
    // Within the window the read is answered from this isolate's last answer: that is the bound.
    if (Date.now() - revokedAt < USER_READ_TTL_MS) expect(soon).toBe(200);

    const write = await send("POST", `/api/companies/${company.id}/issues`, owner.headers, {
      title: "after revocation",
    });
    expect(write).toBe(401);
    const written = await env.DB.prepare("SELECT count(*) AS n FROM issues WHERE company_id = ?")
      .bind(company.id)
      .first<{ n: number }>();
    expect(written?.n).toBe(0);
    // The write asked the Keyring and was refused: this isolate's reads are refused from then on too.
    expect(await read()).toBe(401);
  });

  it("a read-only holder of a key revoked elsewhere is refused once USER_READ_TTL_MS has passed", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const { send } = countingKeyring();
    const read = () => send("GET", `/api/companies/${company.id}`, owner.headers);
    expect(await read()).toBe(200);
    await revokeElsewhere(owner.userId);
    await sleep(USER_READ_TTL_MS + 50);
    expect(await read()).toBe(401);
  });

  it("a board user's membership is trusted for MEMBERSHIP_TTL_MS after D1 confirmed it, then asked again", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const issue = await seedIssue(company);
    const { send } = countingKeyring();
    expect(await send("GET", `/api/issues/${issue.id}`, owner.headers)).toBe(200);

    // No route removes a membership (only deleting the user or company does); a direct delete stands
    // in for a future one that forgot this isolate.
    await env.DB.prepare("DELETE FROM company_memberships WHERE user_id = ?").bind(owner.userId).run();
    const removedAt = Date.now();
    const soon = await send("GET", `/api/issues/${issue.id}`, owner.headers);
    if (Date.now() - removedAt < MEMBERSHIP_TTL_MS) expect(soon).toBe(200);
    await sleep(MEMBERSHIP_TTL_MS + 50);
    expect(await send("GET", `/api/issues/${issue.id}`, owner.headers)).toBe(404);
  });
});
