// The secrets pages in workerd: metadata list, create, rotate (a new version), rename; values are never
// shown, not even after a failed submit. Bad input sits next to its field and writes nothing.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, fieldError, submit, textOf } from "./helpers";

interface Secret {
  id: string;
  name: string;
  key: string;
  description: string | null;
  latestVersion: number;
}

let owner: Session;
let stranger: Session;
let companyId: string;

const secrets = async () =>
  (await call<Secret[]>("GET", `/api/companies/${companyId}/secrets`, { headers: asSession(owner) })).body;
const versions = async (secretId: string) =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM company_secret_versions WHERE secret_id = ?")
      .bind(secretId)
      .first<{ n: number }>()
  )?.n;

beforeAll(async () => {
  owner = await createUser("OWNER");
  stranger = await createUser("OWNER");
  const company = await call<{ id: string }>("POST", "/api/companies", {
    headers: asSession(owner),
    body: { name: `Vault Co ${crypto.randomUUID().slice(0, 6)}` },
  });
  companyId = company.body.id;
});

describe("secrets pages", () => {
  it("creates a secret and lists its metadata, never its value", async () => {
    const created = await submit(owner, `/companies/${companyId}/secrets`, {
      name: "Stripe key",
      key: "",
      value: "sk_live_very_secret",
      description: "Payments",
    });
    expect(created.status).toBe(303);
    expect(created.location).toBe(`/companies/${companyId}/secrets`);
    const [secret] = await secrets();
    expect(secret).toMatchObject({ name: "Stripe key", key: "stripe_key", latestVersion: 1 });
    const page = await browse(owner, `/companies/${companyId}/secrets`);
    expect(page.status).toBe(200);
    expect(textOf(page.html)).toContain("Stripe key stripe_key Payments 1");
    expect(page.html).not.toContain("sk_live_very_secret");
  });

  it("shows a bad key and an empty value next to their fields, without echoing the value", async () => {
    const before = (await secrets()).length;
    const bad = await submit(owner, `/companies/${companyId}/secrets`, {
      name: "Bad",
      key: "Not Allowed!",
      value: "hunter2-value",
    });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.html, "key")).toContain("key may contain only a-z, 0-9, _, . and -");
    expect(bad.html).not.toContain("hunter2-value");
    const empty = await submit(owner, `/companies/${companyId}/secrets`, { name: "Empty", value: "" });
    expect(empty.status).toBe(400);
    expect(fieldError(empty.html, "value")).toContain("value must not be empty");
    const taken = await submit(owner, `/companies/${companyId}/secrets`, {
      name: "Again",
      key: "stripe_key",
      value: "x",
    });
    expect(taken.status).toBe(409);
    expect(textOf(taken.html)).toContain("stripe_key");
    expect((await secrets()).length).toBe(before);
  });

  it("rotates a secret to a new version and renames it", async () => {
    const [secret] = await secrets();
    const path = `/companies/${companyId}/secrets/${secret?.id}`;
    const page = await browse(owner, path);
    expect(page.status).toBe(200);
    expect(textOf(page.html)).toContain("A new value becomes version 2");

    const rotated = await submit(owner, `${path}/rotate`, { value: "sk_live_rotated" });
    expect(rotated.status).toBe(303);
    expect(decodeURIComponent(rotated.headers.get("set-cookie") ?? "")).toContain("now version 2");
    expect((await secrets())[0]?.latestVersion).toBe(2);
    expect(await versions(secret?.id ?? "")).toBe(2);

    const renamed = await submit(owner, `${path}/details`, { name: "Stripe live key", description: "" });
    expect(renamed.status).toBe(303);
    expect((await secrets())[0]).toMatchObject({
      name: "Stripe live key",
      description: null,
      key: "stripe_key",
    });
  });

  it("shows an empty rotation and an empty name next to their fields and changes nothing", async () => {
    const [secret] = await secrets();
    const path = `/companies/${companyId}/secrets/${secret?.id}`;
    const rotate = await submit(owner, `${path}/rotate`, { value: "" });
    expect(rotate.status).toBe(400);
    expect(fieldError(rotate.html, "value")).toContain("value must not be empty");
    const rename = await submit(owner, `${path}/details`, { name: "  ", description: "x" });
    expect(rename.status).toBe(400);
    expect(fieldError(rename.html, "name")).toBeTruthy();
    expect((await secrets())[0]).toEqual(secret);
  });

  it("answers another user's company and secret with 404, and rotates nothing for them", async () => {
    const [secret] = await secrets();
    expect((await browse(stranger, `/companies/${companyId}/secrets`)).status).toBe(404);
    expect((await browse(stranger, `/companies/${companyId}/secrets/${secret?.id}`)).status).toBe(404);
    const denied = await submit(stranger, `/companies/${companyId}/secrets/${secret?.id}/rotate`, {
      value: "evil",
    });
    expect(denied.status).toBe(404);
    expect((await browse(owner, `/companies/${companyId}/secrets/no-such-secret`)).status).toBe(404);
    expect((await secrets())[0]?.latestVersion).toBe(secret?.latestVersion);
  });
});
