// Company secrets: metadata-only listing, write-only values, versions, permissions, and the resolver
// the runner uses to put secret references into a run's environment.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { open } from "../../../../workers/auth/secret-box";
import { resolveSecretEnv } from "../../../../workers/control/secrets/store";
import { database } from "../../../../workers/db/client";
import { call } from "../../helpers";
import { activityOf, seedTwoTenants } from "../helpers";

type Secret = { id: string; name: string; key: string; latestVersion: number; description: string | null };

const uniqueValue = () => `sk-live-${crypto.randomUUID()}`;

async function createSecret(
  companyId: string,
  headers: Record<string, string>,
  body: Record<string, unknown>,
): Promise<Secret> {
  const res = await call<Secret>("POST", `/api/companies/${companyId}/secrets`, { headers, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function versionsOf(secretId: string) {
  const rows = await env.DB.prepare(
    "SELECT version, ciphertext, value_sha256 FROM company_secret_versions WHERE secret_id = ? ORDER BY version",
  )
    .bind(secretId)
    .all<{ version: number; ciphertext: string; value_sha256: string }>();
  return rows.results;
}

describe("secrets API", () => {
  it("creates a secret, derives its key, and never returns or logs the value", async () => {
    const { owner, company, agent } = await seedTwoTenants();
    const value = uniqueValue();
    const res = await call<Secret>("POST", `/api/companies/${company.id}/secrets`, {
      headers: owner.headers,
      body: { name: "OpenAI API Key", value, description: "for the coder" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: "OpenAI API Key", key: "openai_api_key", latestVersion: 1 });
    expect(Object.keys(res.body).sort()).toEqual(
      [
        "companyId",
        "createdAt",
        "createdByAgentId",
        "createdByUserId",
        "description",
        "id",
        "key",
        "latestVersion",
        "name",
        "updatedAt",
      ].sort(),
    );
    const listed = await call<Secret[]>("GET", `/api/companies/${company.id}/secrets`, {
      headers: agent.headers,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.map((s) => s.id)).toEqual([res.body.id]);
    for (const text of [JSON.stringify(res.body), JSON.stringify(listed.body)])
      expect(text).not.toContain(value);

    const [stored] = await versionsOf(res.body.id);
    expect(stored?.ciphertext.startsWith("v1.")).toBe(true);
    expect(stored?.ciphertext).not.toContain(value);
    expect(await open(env.SECRETS_MASTER_KEY, stored?.ciphertext ?? "", res.body.id)).toBe(value);
    const activity = await env.DB.prepare("SELECT action, details FROM activity_log WHERE entity_id = ?")
      .bind(res.body.id)
      .all<{ action: string; details: string }>();
    expect(activity.results.map((row) => row.action)).toEqual(["secret.created"]);
    expect(JSON.stringify(activity.results)).not.toContain(value);
  });

  it("adds a version for a new value, keeps the old ones, and skips an unchanged value", async () => {
    const { owner, company } = await seedTwoTenants();
    const secret = await createSecret(company.id, owner.headers, {
      name: "Token",
      key: "gh.token",
      value: "one",
    });
    const updated = await call<Secret>("PATCH", `/api/secrets/${secret.id}`, {
      headers: owner.headers,
      body: { value: "two", description: "rotated" },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ latestVersion: 2, key: "gh.token", description: "rotated" });
    expect(JSON.stringify(updated.body)).not.toContain('"two"');
    const same = await call<Secret>("PATCH", `/api/secrets/${secret.id}`, {
      headers: owner.headers,
      body: { value: "two" },
    });
    expect(same.body.latestVersion).toBe(2);
    const renamed = await call<Secret>("PATCH", `/api/secrets/${secret.id}`, {
      headers: owner.headers,
      body: { name: "GitHub token" },
    });
    expect(renamed.body).toMatchObject({ name: "GitHub token", latestVersion: 2 });
    const versions = await versionsOf(secret.id);
    expect(versions.map((v) => v.version)).toEqual([1, 2]);
    expect(await open(env.SECRETS_MASTER_KEY, versions[0]?.ciphertext ?? "", secret.id)).toBe("one");
    expect((await activityOf(secret.id)).map((row) => row.action)).toEqual([
      "secret.created",
      "secret.updated",
      "secret.updated",
    ]);
  });

  it("lets only board users write (agents 403), hides other companies (404), rejects duplicates (409)", async () => {
    const { owner, company, agent, outsider, other } = await seedTwoTenants();
    const byAgent = await call("POST", `/api/companies/${company.id}/secrets`, {
      headers: agent.headers,
      body: { name: "X", value: "v" },
    });
    expect(byAgent.status).toBe(403);
    const secret = await createSecret(company.id, owner.headers, { name: "Shared Key", value: "v" });
    const agentPatch = await call("PATCH", `/api/secrets/${secret.id}`, {
      headers: agent.headers,
      body: { value: "w" },
    });
    expect(agentPatch.status).toBe(403);
    for (const [method, path, body] of [
      ["GET", `/api/companies/${company.id}/secrets`, undefined],
      ["POST", `/api/companies/${company.id}/secrets`, { name: "Y", value: "v" }],
      ["PATCH", `/api/secrets/${secret.id}`, { value: "w" }],
    ] as const) {
      const res = await call(method, path, { headers: outsider.headers, body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const duplicate = await call("POST", `/api/companies/${company.id}/secrets`, {
      headers: owner.headers,
      body: { name: "shared key", value: "other" },
    });
    expect(duplicate.status).toBe(409);
    // Keys are per company: the other tenant may use the same one.
    const theirs = await call("POST", `/api/companies/${other.id}/secrets`, {
      headers: outsider.headers,
      body: { name: "Shared Key", value: "v" },
    });
    expect(theirs.status).toBe(201);
    expect((await versionsOf(secret.id)).map((v) => v.version)).toEqual([1]);
  });

  it("validates bodies (400)", async () => {
    const { owner, company } = await seedTwoTenants();
    const path = `/api/companies/${company.id}/secrets`;
    for (const body of [
      { name: "A", value: "" },
      { name: "A", value: "x".repeat(64 * 1024 + 1) },
      { name: "A", value: "v", key: "Upper" },
      { name: "A", value: "v", key: "has space" },
      { name: "", value: "v" },
      { name: "A", value: "v", extra: 1 },
      { name: "A" },
    ]) {
      const res = await call("POST", path, { headers: owner.headers, body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
    }
    const maxed = await call("POST", path, {
      headers: owner.headers,
      body: { name: "Big", value: "x".repeat(64 * 1024) },
    });
    expect(maxed.status).toBe(201);
    const secret = await createSecret(company.id, owner.headers, { name: "B", value: "v" });
    for (const body of [{}, { key: "b2" }, { value: "" }]) {
      const res = await call("PATCH", `/api/secrets/${secret.id}`, { headers: owner.headers, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe("resolveSecretEnv", () => {
  it("resolves plain strings and secret references (latest, or pinned to the current version)", async () => {
    const { owner, company } = await seedTwoTenants();
    const secret = await createSecret(company.id, owner.headers, { name: "Api", value: "first" });
    await call("PATCH", `/api/secrets/${secret.id}`, { headers: owner.headers, body: { value: "second" } });
    const resolved = await resolveSecretEnv(env, database(env.DB), company.id, {
      PLAIN: "hello",
      LATEST: { type: "secret_ref", secretId: secret.id },
      EXPLICIT_LATEST: { type: "secret_ref", secretId: secret.id, version: "latest" },
      PINNED: { type: "secret_ref", secretId: secret.id, version: 2 },
    });
    expect(resolved).toEqual({
      PLAIN: "hello",
      LATEST: "second",
      EXPLICIT_LATEST: "second",
      PINNED: "second",
    });
    expect(await resolveSecretEnv(env, database(env.DB), company.id, undefined)).toEqual({});
  });

  it("throws an error naming the variable for unknown, foreign, rotated-away or malformed references", async () => {
    const { owner, company, outsider, other } = await seedTwoTenants();
    const foreign = await createSecret(other.id, outsider.headers, { name: "Theirs", value: "nope" });
    const mine = await createSecret(company.id, owner.headers, { name: "Mine", value: "v" });
    const rotated = await createSecret(company.id, owner.headers, { name: "Rotated", value: "before" });
    await call("PATCH", `/api/secrets/${rotated.id}`, { headers: owner.headers, body: { value: "after" } });
    const db = database(env.DB);
    const cases: Array<[unknown, RegExp]> = [
      [{ FOREIGN: { type: "secret_ref", secretId: foreign.id } }, /FOREIGN.*does not exist/],
      [{ MISSING: { type: "secret_ref", secretId: crypto.randomUUID() } }, /MISSING.*does not exist/],
      [
        { FUTURE: { type: "secret_ref", secretId: mine.id, version: 7 } },
        /FUTURE.*version 7.*does not exist/,
      ],
      [
        { ROTATED: { type: "secret_ref", secretId: rotated.id, version: 1 } },
        /ROTATED.*version 1.*rotated away/,
      ],
      [{ BAD_VERSION: { type: "secret_ref", secretId: mine.id, version: 0 } }, /BAD_VERSION/],
      [{ NUMBER: 42 }, /NUMBER/],
      [{ WRONG_TYPE: { type: "vault", secretId: mine.id } }, /WRONG_TYPE/],
      [["not", "an", "object"], /adapterConfig\.env must be an object/],
    ];
    for (const [input, message] of cases)
      await expect(resolveSecretEnv(env, db, company.id, input)).rejects.toThrow(message);
    await expect(
      resolveSecretEnv(env, db, other.id, { OK: { type: "secret_ref", secretId: foreign.id } }),
    ).resolves.toEqual({ OK: "nope" });
  });

  it("refuses a ciphertext copied onto another secret (bound to its owner id)", async () => {
    const { owner, company } = await seedTwoTenants();
    const source = await createSecret(company.id, owner.headers, { name: "Source", value: "the real one" });
    const target = await createSecret(company.id, owner.headers, { name: "Target", value: "decoy" });
    const [sealed] = await versionsOf(source.id);
    await env.DB.prepare("UPDATE company_secret_versions SET ciphertext = ? WHERE secret_id = ?")
      .bind(sealed?.ciphertext, target.id)
      .run();
    await expect(
      resolveSecretEnv(env, database(env.DB), company.id, { T: { type: "secret_ref", secretId: target.id } }),
    ).rejects.toThrow(/T.*could not be decrypted/);
  });
});
