// Migration 0015 on data written before it (issue 25, H-a): companies learn their creator from their
// `company.created` activity, and a runner registered with the old allCompanies wildcard is listed, by
// id, for the companies its owner created and still owns; a company its owner joined is not listed.
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { boardUser } from "../helpers";

/** The statements of 0015 after the column is added: what an upgraded database runs on its old rows. */
function backfill(): string[] {
  const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0015_runners_attach"));
  if (!migration) throw new Error("migration 0015_runners_attach not found");
  return migration.queries.filter((query) => !/ALTER TABLE/i.test(query));
}

it("an old allCompanies runner ends up listing the companies its owner created and owns, not joined ones", async () => {
  const admin = await boardUser();
  const staff = await boardUser();
  const now = Date.now();
  const company = (id: string, prefix: string) =>
    env.DB.prepare(
      `INSERT INTO companies (id, name, status, issue_prefix, issue_counter, budget_monthly_cents,
         spent_monthly_cents, require_board_approval_for_new_agents, created_at, updated_at)
       VALUES (?, ?, 'active', ?, 0, 0, 0, 1, ?, ?)`,
    ).bind(id, id, prefix, now, now);
  const member = (companyId: string, userId: string, role: string) =>
    env.DB.prepare(
      "INSERT INTO company_memberships (company_id, user_id, role, created_at) VALUES (?, ?, ?, ?)",
    ).bind(companyId, userId, role, now);
  const created = (companyId: string, userId: string) =>
    env.DB.prepare(
      `INSERT INTO activity_log (id, company_id, actor_type, actor_id, action, entity_type, entity_id, details, created_at)
       VALUES (?, ?, 'user', ?, 'company.created', 'company', ?, '{}', ?)`,
    ).bind(crypto.randomUUID(), companyId, userId, companyId, now);
  const [own, joined, demoted] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
  const suffix = () => crypto.randomUUID().replace(/-/g, "").slice(0, 6).toUpperCase();
  const wide = crypto.randomUUID();
  await env.DB.batch([
    company(own, `O${suffix()}`),
    company(joined, `J${suffix()}`),
    company(demoted, `D${suffix()}`),
    member(own, admin.userId, "owner"),
    member(joined, staff.userId, "owner"),
    member(joined, admin.userId, "owner"),
    member(demoted, admin.userId, "member"),
    created(own, admin.userId),
    created(joined, staff.userId),
    created(demoted, admin.userId),
    env.DB.prepare(
      `INSERT INTO runners (id, owner_user_id, name, token_hash, token_prefix, all_companies, created_at)
       VALUES (?, ?, 'npm start (this machine)', ?, 'swr_old', 1, ?)`,
    ).bind(wide, admin.userId, crypto.randomUUID(), now),
  ]);

  for (const query of backfill()) await env.DB.prepare(query).run();

  const creators = await env.DB.prepare(
    "SELECT id, created_by_user_id AS creator FROM companies WHERE id IN (?, ?, ?)",
  )
    .bind(own, joined, demoted)
    .all<{ id: string; creator: string }>();
  expect(Object.fromEntries(creators.results.map((row) => [row.id, row.creator]))).toEqual({
    [own]: admin.userId,
    [joined]: staff.userId,
    [demoted]: admin.userId,
  });
  const listed = await env.DB.prepare("SELECT company_id FROM runner_companies WHERE runner_id = ?")
    .bind(wide)
    .all<{ company_id: string }>();
  expect(listed.results).toEqual([{ company_id: own }]);
});
