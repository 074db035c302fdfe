// Who the company's line may reach and who an answering number is (issue 28): only verified numbers
// of current members, with their role now; quiet hours in the member's own time zone.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { memberByPhone, quietUntil, recipientsFor } from "../../../workers/control/line";
import { database } from "../../../workers/db/client";
import { addMembership, boardUser, type SeededCompany, seedTenant } from "./helpers";

const NOW = Date.UTC(2026, 10, 28, 21, 30); // 21:30 UTC = 22:30 in Berlin (CET)

async function linkNumber(companyId: string, userId: string, phone: string, verified: boolean, extra = "") {
  await env.DB.prepare(
    `INSERT INTO line_members (company_id, user_id, phone, verified_at, created_at, updated_at${extra ? ", quiet_start_minute, quiet_end_minute, time_zone" : ""})
     VALUES (?, ?, ?, ?, 0, 0${extra ? `, ${extra}` : ""})`,
  )
    .bind(companyId, userId, phone, verified ? 1 : null)
    .run();
}

async function addMember(companyId: string, role: "member" | "viewer"): Promise<string> {
  const user = await boardUser();
  await addMembership(companyId, user.userId, role);
  return user.userId;
}

describe("the line's directory", () => {
  let company: SeededCompany;
  let ownerId: string;
  let viewerId: string;
  let unverifiedId: string;
  let removedId: string;

  beforeAll(async () => {
    const tenant = await seedTenant();
    company = tenant.company;
    ownerId = tenant.board.userId;
    await linkNumber(company.id, ownerId, "4915100000001", true, "1320, 420, 'Europe/Berlin'");
    viewerId = await addMember(company.id, "viewer");
    await linkNumber(company.id, viewerId, "4915100000002", true);
    unverifiedId = await addMember(company.id, "member");
    await linkNumber(company.id, unverifiedId, "4915100000003", false);
    removedId = await addMember(company.id, "member");
    await linkNumber(company.id, removedId, "4915100000004", true);
    await env.DB.prepare("DELETE FROM company_memberships WHERE company_id = ? AND user_id = ?")
      .bind(company.id, removedId)
      .run();
  });

  it("recipients are verified current members, filtered by role, with the end of their quiet hours", async () => {
    const db = database(env.DB);
    const everyone = await recipientsFor(db, company.id, "approvals", {}, NOW);
    expect(everyone.map((r) => r.userId).sort()).toEqual([ownerId, viewerId].sort());
    const owners = await recipientsFor(db, company.id, "approvals", { roles: ["owner"] }, NOW);
    expect(owners).toEqual([
      expect.objectContaining({ userId: ownerId, role: "owner", quietUntil: Date.UTC(2026, 10, 29, 6, 0) }),
    ]);
    expect(await recipientsFor(db, company.id, "approvals", { userIds: [] }, NOW)).toEqual([]);
  });

  it("a number names a verified current member, with the role they have now; anyone else is nobody", async () => {
    const db = database(env.DB);
    expect(await memberByPhone(db, company.id, "4915100000002")).toMatchObject({
      userId: viewerId,
      role: "viewer",
    });
    expect(await memberByPhone(db, company.id, "4915100000003")).toBeNull();
    expect(await memberByPhone(db, company.id, "4915100000004")).toBeNull();
    expect(await memberByPhone(db, company.id, "4915199999999")).toBeNull();
  });

  it("quiet hours wrap past midnight in the member's zone and end at their end", () => {
    const berlin = { quietStartMinute: 22 * 60, quietEndMinute: 7 * 60, timeZone: "Europe/Berlin" };
    expect(quietUntil(berlin, NOW)).toBe(Date.UTC(2026, 10, 29, 6, 0));
    expect(quietUntil(berlin, Date.UTC(2026, 10, 28, 12, 0))).toBeNull();
    expect(quietUntil({ ...berlin, quietStartMinute: null }, NOW)).toBeNull();
    const daytime = { quietStartMinute: 9 * 60, quietEndMinute: 17 * 60, timeZone: "UTC" };
    expect(quietUntil(daytime, Date.UTC(2026, 10, 28, 16, 59))).toBe(Date.UTC(2026, 10, 28, 17, 0));
    expect(quietUntil(daytime, Date.UTC(2026, 10, 28, 17, 0))).toBeNull();
  });
});
