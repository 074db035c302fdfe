// The first SUPERADMIN is created by the first login with ADMIN_EMAIL / ADMIN_PASSWORD. Two such
// logins at once (npm start's local runner signs in as the admin just as a person or a test does)
// must both succeed, and create one admin.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, freshAddress, ROOT } from "../helpers";

describe("the bootstrap admin", () => {
  it("simultaneous first logins all succeed and create exactly one SUPERADMIN", async () => {
    const login = () =>
      call("POST", "/api/auth/login", { body: ROOT, headers: { "CF-Connecting-IP": freshAddress() } });
    const answers = await Promise.all(Array.from({ length: 8 }, login));
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    const admins = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE role = 'SUPERADMIN'").first<{
      n: number;
    }>();
    expect(admins?.n).toBe(1);
  });
});
