// Each member's own number on the company's line (issue 28): what reaches them, who sees numbers, and
// the number going with the membership. The real Worker and D1; only the bridge is a fake.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { linkedLine } from "../../mcp/whatsapp-line";
import { boardUser, seedAgent, seedCompany } from "../helpers";
import { freshPhone, join, type MyNumber, meOf, requestCode, rowOf, verify } from "./member-world";

describe("choosing what reaches one", () => {
  it("kinds, quiet hours and time zone are stored and shown; null clears quiet hours; DELETE unlinks", async () => {
    const line = await linkedLine();
    const member = await join(line.company.id);
    const path = meOf(line.company.id);
    await requestCode(line, member, freshPhone());
    const patched = await call<MyNumber>("PATCH", path, {
      body: {
        notify: ["questions", "approvals", "questions"],
        quietHours: { start: "22:00", end: "07:00" },
        timeZone: "Europe/Berlin",
      },
      headers: member.headers,
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({
      notify: ["approvals", "questions"],
      quietHours: { start: "22:00", end: "07:00" },
      timeZone: "Europe/Berlin",
    });
    const row = await env.DB.prepare(
      "SELECT quiet_start_minute AS s, quiet_end_minute AS e FROM line_members WHERE company_id = ? AND user_id = ?",
    )
      .bind(line.company.id, member.userId)
      .first<{ s: number; e: number }>();
    expect(row).toEqual({ s: 22 * 60, e: 7 * 60 });

    const cleared = await call<MyNumber>("PATCH", path, {
      body: { quietHours: null },
      headers: member.headers,
    });
    expect(cleared.body).toMatchObject({
      quietHours: null,
      notify: ["approvals", "questions"],
      timeZone: "Europe/Berlin",
    });

    expect((await call("DELETE", path, { headers: member.headers })).status).toBe(204);
    expect(await rowOf(line.company.id, member.userId)).toBeNull();
    expect((await call<MyNumber>("GET", path, { headers: member.headers })).body.phone).toBeNull();
  });
});

describe("who may see and change numbers", () => {
  it("owners list every member's number masked but for the last 4 digits; members and agents may not", async () => {
    const line = await linkedLine();
    const member = await join(line.company.id);
    const phone = freshPhone();
    await verify(line.company.id, member, await requestCode(line, member, phone));
    const listPath = `/api/companies/${line.company.id}/line/members`;
    const list = await call<Array<{ userId: string; phone: string | null; verified: boolean; role: string }>>(
      "GET",
      listPath,
      { headers: line.owner.headers },
    );
    expect(list.status).toBe(200);
    expect(list.body).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ userId: line.owner.userId, role: "owner", phone: null, verified: false }),
        expect.objectContaining({
          userId: member.userId,
          role: "member",
          phone: `••••••••${phone.slice(-4)}`,
          verified: true,
        }),
      ]),
    );
    expect(JSON.stringify(list.body)).not.toContain(phone);
    expect((await call("GET", listPath, { headers: member.headers })).status).toBe(403);
    expect((await call("GET", listPath, { headers: line.agent.headers })).status).toBe(403);
    expect((await call("GET", meOf(line.company.id), { headers: line.agent.headers })).status).toBe(403);
    expect(
      (await call("PUT", meOf(line.company.id), { body: { phone }, headers: line.agent.headers })).status,
    ).toBe(403);
  });

  it("another company's id is 404 for every route, and nothing is sent", async () => {
    const line = await linkedLine();
    const stranger = await boardUser();
    await seedCompany(stranger);
    const other = await seedAgent((await seedCompany(await boardUser())).id);
    const path = meOf(line.company.id);
    for (const [method, suffix, body] of [
      ["GET", "", undefined],
      ["PUT", "", { phone: freshPhone() }],
      ["POST", "/verify", { code: "123456" }],
      ["PATCH", "", { timeZone: "UTC" }],
      ["DELETE", "", undefined],
    ] as const) {
      expect(
        (await call(method, `${path}${suffix}`, { body, headers: stranger.headers })).status,
        method,
      ).toBe(404);
      expect((await call(method, `${path}${suffix}`, { body, headers: other.headers })).status, method).toBe(
        404,
      );
    }
    expect(
      (await call("GET", `/api/companies/${line.company.id}/line/members`, { headers: stranger.headers }))
        .status,
    ).toBe(404);
    expect(line.sent()).toEqual([]);
  });

  it("removing a member deletes their number on the line in the same request; leaving does too", async () => {
    const line = await linkedLine();
    const removed = await join(line.company.id);
    const leaving = await join(line.company.id);
    await verify(line.company.id, removed, await requestCode(line, removed, freshPhone()));
    await requestCode(line, leaving, freshPhone());
    const res = await call("DELETE", `/api/companies/${line.company.id}/members/${removed.userId}`, {
      headers: line.owner.headers,
    });
    expect(res.status).toBe(204);
    expect(await rowOf(line.company.id, removed.userId)).toBeNull();
    const left = await call("DELETE", `/api/companies/${line.company.id}/members/${leaving.userId}`, {
      headers: leaving.headers,
    });
    expect(left.status).toBe(204);
    expect(await rowOf(line.company.id, leaving.userId)).toBeNull();
    // The last owner cannot leave: that refusal keeps their number.
    await requestCode(line, line.owner, freshPhone());
    const refused = await call("DELETE", `/api/companies/${line.company.id}/members/${line.owner.userId}`, {
      headers: line.owner.headers,
    });
    expect(refused.status).toBe(409);
    expect(await rowOf(line.company.id, line.owner.userId)).not.toBeNull();
  });
});
