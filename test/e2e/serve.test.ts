// `npm run serve`: the Worker built once and served by workerd without wrangler dev's reload proxy
// (what the benchmarks measure). It must be the same product on the same local data as `npm start`.
import { afterAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.ts";

const ADMIN = { email: "admin@example.com", password: "change-me-locally" };

const stacks: Stack[] = [];

afterAll(async () => {
  for (const stack of stacks) await stack.stop().catch(() => undefined);
});

async function adminApiKey(baseUrl: string): Promise<string> {
  const login = await fetch(`${baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(ADMIN),
  });
  expect(login.status).toBe(200);
  const { data } = (await login.json()) as { data: { csrfToken: string } };
  const cookie = login.headers
    .getSetCookie()
    .map((header) => header.split(";")[0] ?? "")
    .find((pair) => pair.startsWith("web-auth.session-token="));
  const created = await fetch(`${baseUrl}/api/user/api-key`, {
    method: "POST",
    headers: { Cookie: cookie ?? "", "X-CSRF-Token": data.csrfToken },
  });
  expect(created.status).toBe(201);
  return ((await created.json()) as { data: { apiKey: string } }).data.apiKey;
}

describe("npm run serve", () => {
  it("serves the API from a migrated database that npm start then opens with the same data", async () => {
    const served = await startStack({ serve: true, env: { BRIDGE: "0" } });
    stacks.push(served);
    const health = await fetch(`${served.baseUrl}/api/health`);
    expect(health.status).toBe(200);
    // A request without credentials gets the app's own JSON 401: the Worker itself answered.
    const anonymous = await fetch(`${served.baseUrl}/api/sessions`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { status: boolean }).status).toBe(false);

    const apiKey = await adminApiKey(served.baseUrl);
    const name = `Served ${Date.now()}`;
    const created = await fetch(`${served.baseUrl}/api/companies`, {
      method: "POST",
      headers: { "X-API-Key": apiKey, "Content-Type": "application/json" },
      body: JSON.stringify({ name }),
    });
    expect(created.status).toBe(201);
    const company = (await created.json()) as { id: string };
    await served.stop({ keepState: true });

    const dev = await startStack({ stateDir: served.stateDir, env: { BRIDGE: "0" } });
    stacks.push(dev);
    const read = await fetch(`${dev.baseUrl}/api/companies/${company.id}`, {
      headers: { "X-API-Key": apiKey },
    });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { name: string }).name).toBe(name);
  });
});
