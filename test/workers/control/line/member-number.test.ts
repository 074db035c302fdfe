// Each member's own number on the company's line (issue 28): the line really sends the code (the fake
// bridge holding the line's session records what WhatsApp would have received), the member confirms
// it, and chooses what reaches them. The real Worker, D1 and SessionDO; only the bridge is a fake.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { linkedLine } from "../../mcp/whatsapp-line";
import { boardUser, seedCompany } from "../helpers";
import {
  aMinuteLater,
  codesSentTo,
  freshPhone,
  join,
  type MyNumber,
  meOf,
  requestCode,
  rowOf,
  verify,
} from "./member-world";

describe("linking and verifying one's own number", () => {
  it("the line sends a 6-digit code to the number; the right code verifies it", async () => {
    const line = await linkedLine();
    const member = await join(line.company.id);
    const phone = freshPhone();
    const before = await call<MyNumber>("GET", meOf(line.company.id), { headers: member.headers });
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ phone: null, verified: false, codePending: false, timeZone: "UTC" });

    const put = await call<MyNumber>("PUT", meOf(line.company.id), {
      body: { phone: `+${phone}` },
      headers: member.headers,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ phone, verified: false, codePending: true });
    const [code] = codesSentTo(line, phone, line.company.name);
    expect(code).toMatch(/^\d{6}$/);
    const stored = await rowOf(line.company.id, member.userId);
    expect(stored?.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored?.code_hash).not.toContain(code);
    expect(stored?.verified_at).toBeNull();

    const ok = await verify(line.company.id, member, code);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ phone, verified: true, codePending: false });
    expect((await rowOf(line.company.id, member.userId))?.verified_at).toEqual(expect.any(Number));
    const after = await call<MyNumber>("GET", meOf(line.company.id), { headers: member.headers });
    expect(after.body).toMatchObject({ phone, verified: true });
    // The code is spent: entering it again finds none pending.
    expect((await verify(line.company.id, member, code)).status).toBe(422);
  });

  it("a viewer links their own number too, written without +", async () => {
    const line = await linkedLine();
    const viewer = await join(line.company.id, "viewer");
    const phone = freshPhone();
    const code = await requestCode(line, viewer, phone);
    expect((await verify(line.company.id, viewer, code)).body).toMatchObject({ phone, verified: true });
    expect(
      (
        await call("PATCH", meOf(line.company.id), {
          body: { timeZone: "Asia/Tokyo" },
          headers: viewer.headers,
        })
      ).status,
    ).toBe(200);
    expect((await call("DELETE", meOf(line.company.id), { headers: viewer.headers })).status).toBe(204);
  });

  it("five wrong codes void the code: even the right one is refused until a new one is sent", async () => {
    const line = await linkedLine();
    const member = await join(line.company.id);
    const phone = freshPhone();
    const code = await requestCode(line, member, phone);
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, "0");
    const details: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await verify(line.company.id, member, wrong);
      expect(res.status).toBe(422);
      details.push(String(res.body.error));
    }
    expect(details.slice(0, 4)).toEqual([
      "Wrong code; 4 tries left",
      "Wrong code; 3 tries left",
      "Wrong code; 2 tries left",
      "Wrong code; 1 try left",
    ]);
    expect(details[4]).toMatch(/5th: the code is void; request a new one/);
    const right = await verify(line.company.id, member, code);
    expect(right.status).toBe(422);
    expect(right.body.error).toMatch(/No code is pending/);
    expect((await rowOf(line.company.id, member.userId))?.verified_at).toBeNull();

    await aMinuteLater(line.company.id, member.userId);
    const fresh = await requestCode(line, member, phone);
    expect((await verify(line.company.id, member, fresh)).body).toMatchObject({ verified: true });
  });

  it("a code wrong in its first digit and one wrong in its last are refused alike, each one try", async () => {
    const line = await linkedLine();
    const member = await join(line.company.id);
    const code = await requestCode(line, member, freshPhone());
    const flip = (digit: string) => String((Number(digit) + 1) % 10);
    const firstWrong = flip(code[0] ?? "0") + code.slice(1);
    const lastWrong = code.slice(0, 5) + flip(code[5] ?? "0");
    const a = await verify(line.company.id, member, firstWrong);
    const b = await verify(line.company.id, member, lastWrong);
    expect([a.status, b.status]).toEqual([422, 422]);
    expect([a.body.error, b.body.error]).toEqual(["Wrong code; 4 tries left", "Wrong code; 3 tries left"]);
    expect((await rowOf(line.company.id, member.userId))?.code_attempts).toBe(2);
    expect((await verify(line.company.id, member, code)).status).toBe(200);
  });

  it("an expired code is refused with 422 and stays unverified", async () => {
    const line = await linkedLine();
    const member = await join(line.company.id);
    const code = await requestCode(line, member, freshPhone());
    await env.DB.prepare("UPDATE line_members SET code_expires_at = ? WHERE company_id = ? AND user_id = ?")
      .bind(Date.now() - 1, line.company.id, member.userId)
      .run();
    const res = await verify(line.company.id, member, code);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/expired/);
    expect((await rowOf(line.company.id, member.userId))?.verified_at).toBeNull();
  });

  it("one code a minute: a second request is 429 with Retry-After and sends nothing", async () => {
    const line = await linkedLine();
    const member = await join(line.company.id);
    const phone = freshPhone();
    const first = await requestCode(line, member, phone);
    const again = await call("PUT", meOf(line.company.id), { body: { phone }, headers: member.headers });
    expect(again.status).toBe(429);
    expect(Number(again.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(Number(again.headers.get("Retry-After"))).toBeLessThanOrEqual(60);
    expect(codesSentTo(line, phone, line.company.name)).toHaveLength(1);

    await aMinuteLater(line.company.id, member.userId);
    const second = await requestCode(line, member, phone);
    expect(codesSentTo(line, phone, line.company.name)).toHaveLength(2);
    // Only the newest code counts.
    if (first !== second) expect((await verify(line.company.id, member, first)).status).toBe(422);
    expect((await verify(line.company.id, member, second)).status).toBe(200);
  });

  it("requests at once send one code: one 200, the rest 429, and that one code verifies", async () => {
    const line = await linkedLine();
    const member = await join(line.company.id);
    const phone = freshPhone();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        call("PUT", meOf(line.company.id), { body: { phone }, headers: member.headers }),
      ),
    );
    expect(answers.map((res) => res.status).sort()).toEqual([200, 429, 429, 429, 429]);
    const codes = codesSentTo(line, phone, line.company.name);
    expect(codes).toHaveLength(1);
    expect((await verify(line.company.id, member, codes[0] ?? "")).status).toBe(200);
  });

  it("a new number resets verification; the same number stays verified", async () => {
    const line = await linkedLine();
    const member = await join(line.company.id);
    const phone = freshPhone();
    await verify(line.company.id, member, await requestCode(line, member, phone));
    await aMinuteLater(line.company.id, member.userId);
    await requestCode(line, member, phone);
    expect((await rowOf(line.company.id, member.userId))?.verified_at).toEqual(expect.any(Number));
    await aMinuteLater(line.company.id, member.userId);
    const other = freshPhone();
    await requestCode(line, member, other);
    const row = await rowOf(line.company.id, member.userId);
    expect(row?.phone).toBe(other);
    expect(row?.verified_at).toBeNull();
  });

  it("a number another member verified is 409, on request and on a racing verification", async () => {
    const line = await linkedLine();
    const a = await join(line.company.id);
    const b = await join(line.company.id);
    const phone = freshPhone();
    const codeA = await requestCode(line, a, phone);
    const codeB = await requestCode(line, b, phone);
    expect((await verify(line.company.id, a, codeA)).status).toBe(200);
    const raced = await verify(line.company.id, b, codeB);
    expect(raced.status).toBe(409);
    expect(raced.body.error).toMatch(/already verified by another member/);
    await aMinuteLater(line.company.id, b.userId);
    const put = await call<{ error: string }>("PUT", meOf(line.company.id), {
      body: { phone },
      headers: b.headers,
    });
    expect(put.status).toBe(409);
    expect(line.sent(`${phone}@s.whatsapp.net`)).toHaveLength(2);
  });

  it("a company without a line answers 409 and stores nothing", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const res = await call<{ error: string }>("PUT", meOf(company.id), {
      body: { phone: freshPhone() },
      headers: owner.headers,
    });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/could not send the code: This company has no WhatsApp line/);
    expect(await rowOf(company.id, owner.userId)).toBeNull();
  });

  it("a line whose session is stopped answers 409 saying why, and stores nothing", async () => {
    const line = await linkedLine();
    const member = await join(line.company.id);
    const stopped = await call("POST", `/api/sessions/${line.session.slug}/stop`, {
      headers: line.owner.headers,
    });
    expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
    const res = await call<{ error: string }>("PUT", meOf(line.company.id), {
      body: { phone: freshPhone() },
      headers: member.headers,
    });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe(
      "The company's line could not send the code: Session not ready: WhatsApp is not connected",
    );
    expect(await rowOf(line.company.id, member.userId)).toBeNull();
  });

  it("bad input is a 4xx naming the problem and changes nothing", async () => {
    const line = await linkedLine();
    const member = await join(line.company.id);
    const path = meOf(line.company.id);
    for (const body of [
      { phone: 491701234567 },
      { phone: "+49 170 1234567" },
      { phone: "0170123456" },
      { phone: "12ab5678" },
      { phone: "1".repeat(500) },
      { phone: "491701234567", extra: true },
      {},
    ]) {
      const res = await call<{ error: string }>("PUT", path, { body, headers: member.headers });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const huge = await call("PUT", path, { body: { phone: "1".repeat(2_000_000) }, headers: member.headers });
    expect(huge.status).toBe(413);
    expect(line.sent()).toEqual([]);
    expect(await rowOf(line.company.id, member.userId)).toBeNull();

    // Preferences before a number is linked: nothing to change.
    expect((await call("PATCH", path, { body: { timeZone: "UTC" }, headers: member.headers })).status).toBe(
      422,
    );
    await requestCode(line, member, freshPhone());
    for (const code of [123456, "12345", "1234567", "abcdef"])
      expect((await verify(line.company.id, member, code)).status, String(code)).toBe(400);
    expect((await rowOf(line.company.id, member.userId))?.code_attempts).toBe(0);

    const zone = await call<{ error: string }>("PATCH", path, {
      body: { timeZone: "Mars/Olympus_Mons" },
      headers: member.headers,
    });
    expect(zone.status).toBe(422);
    expect(zone.body.error).toMatch(/not an IANA time zone/);
    for (const body of [
      { notify: ["spam"] },
      { notify: "approvals" },
      { quietHours: { start: "25:00", end: "07:00" } },
      { quietHours: { start: "22:00" } },
      { timeZone: 3 },
      { colour: "red" },
    ])
      expect(
        (await call("PATCH", path, { body, headers: member.headers })).status,
        JSON.stringify(body),
      ).toBe(400);
    const empty = await call("PATCH", path, {
      body: { quietHours: { start: "22:00", end: "22:00" } },
      headers: member.headers,
    });
    expect(empty.status).toBe(422);
    const row = await rowOf(line.company.id, member.userId);
    expect(row?.time_zone).toBe("UTC");
    // A new member receives every kind, mentions (issue 30) included.
    expect(JSON.parse(row?.notify ?? "[]")).toEqual([
      "approvals",
      "questions",
      "budget",
      "failed_runs",
      "digest",
      "mentions",
    ]);
  });
});
