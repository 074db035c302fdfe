// The API key page's scoped keys (issue 27): listed, created with scopes, a limit and an expiry (the key
// shown once, in the response), and revoked.
import { describe, expect, it } from "vitest";
import { asKey, call, createUser } from "../helpers";
import { browse, submit, textOf } from "./helpers";

const shownScopedKey = (html: string) =>
  html.match(/id="new-scoped-key" class="secret" readonly="" value="([^"]+)"/)?.[1];

describe("API key page: scoped keys", () => {
  it("creates a read-only expiring key, shows it once, and revokes it", async () => {
    const viewer = await createUser("OWNER");
    const before = await browse(viewer, "/api-key");
    expect(before.status).toBe(200);
    expect(textOf(before.html)).toContain("No scoped keys.");

    const res = await submit(viewer, "/api-key/scoped", {
      name: "Claude Desktop",
      scope_read: "on",
      limit: "",
      expiresInDays: "30",
    });
    expect(res.status, res.html.slice(0, 300)).toBe(201);
    const key = shownScopedKey(res.html) ?? "";
    expect(key).toMatch(/^swb_/);
    expect(textOf(res.html)).toMatch(/Claude Desktop\s+swb_\w+…\w{4}\s+read\s+none/);
    // A read key reads and does not write.
    expect((await call("GET", "/api/sessions", { headers: asKey(key) })).status).toBe(200);
    expect((await call("POST", "/api/sessions", { headers: asKey(key), body: { name: "x" } })).status).toBe(
      403,
    );

    const again = await browse(viewer, "/api-key");
    expect(again.html).not.toContain(key);
    expect(textOf(again.html)).toContain("Claude Desktop");

    const action = again.html.match(/action="(\/api-key\/scoped\/[^"]+\/revoke)"/)?.[1];
    expect(action).toBeDefined();
    const revoked = await submit(viewer, action ?? "");
    expect(revoked.status).toBe(303);
    expect((await call("GET", "/api/sessions", { headers: asKey(key) })).status).toBe(401);
    expect(textOf((await browse(viewer, "/api-key")).html)).toContain("No scoped keys.");
  });

  it("a key without a scope is refused with the API's message, and nothing is created", async () => {
    const viewer = await createUser("OWNER");
    const res = await submit(viewer, "/api-key/scoped", { name: "nothing", limit: "" });
    expect(res.status).toBe(400);
    expect(res.html).toContain('role="alert"');
    expect(shownScopedKey(res.html)).toBeUndefined();
    expect(textOf(res.html)).toContain("No scoped keys.");
  });
});
