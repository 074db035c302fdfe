// Shared setup of the control-issues*.test.ts suites: a company with its board owner and org, the
// issue calls, and rows seeded straight into D1 for what the issue endpoints only refer to.
import { env } from "cloudflare:workers";
import { call } from "../../helpers";
import { type BoardUser, boardUser, type SeededCompany, seedCompany, seedOrg } from "../helpers";

export interface Issue {
  id: string;
  companyId: string;
  identifier: string;
  issueNumber: number;
  title: string;
  description: string | null;
  status: string;
  priority: string;
  parentId: string | null;
  projectId: string | null;
  goalId: string | null;
  assigneeAgentId: string | null;
  assigneeUserId: string | null;
  createdByUserId: string | null;
  createdByAgentId: string | null;
  started_at: string | null;
  completed_at: string | null;
  cancelledAt: string | null;
  updatedAt: string;
  labelIds?: string[];
  comment?: Comment;
}

export interface Comment {
  id: string;
  issueId: string;
  companyId: string;
  body: string;
  authorAgentId: string | null;
  authorUserId: string | null;
  createdAt: string;
}

export interface ErrorBody {
  error: string;
  details?: Record<string, unknown>;
}

export async function world(options: { members?: BoardUser[] } = {}) {
  const owner = await boardUser();
  const company = await seedCompany(owner, { members: options.members });
  const org = await seedOrg(company.id);
  return { owner, company, ...org };
}

export const createIssue = <T = Issue>(
  headers: Record<string, string>,
  company: SeededCompany | string,
  body: Record<string, unknown>,
) =>
  call<T>("POST", `/api/companies/${typeof company === "string" ? company : company.id}/issues`, {
    headers,
    body,
  });

/** Creates through the API and insists it worked. */
export async function newIssue(
  headers: Record<string, string>,
  company: SeededCompany,
  body: Record<string, unknown> = {},
): Promise<Issue> {
  const res = await createIssue(headers, company, {
    title: `Task ${crypto.randomUUID().slice(0, 6)}`,
    ...body,
  });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export const patchIssue = <T = Issue>(headers: Record<string, string>, id: string, body: unknown) =>
  call<T>("PATCH", `/api/issues/${id}`, { headers, body });

export const listIssues = (headers: Record<string, string>, company: SeededCompany, query = "") =>
  call<Issue[]>("GET", `/api/companies/${company.id}/issues${query}`, { headers });

export const issueRow = (id: string) =>
  env.DB.prepare("SELECT * FROM issues WHERE id = ?").bind(id).first<Record<string, unknown>>();

export async function rowsOf<T = Record<string, unknown>>(query: string, ...binds: unknown[]): Promise<T[]> {
  return (
    await env.DB.prepare(query)
      .bind(...binds)
      .all<T>()
  ).results;
}

export const actionsOf = async (issueId: string) =>
  (
    await rowsOf<{ action: string }>(
      "SELECT action FROM activity_log WHERE entity_id = ? ORDER BY created_at, rowid",
      issueId,
    )
  ).map((row) => row.action);

export const wakesOf = (issueId: string) =>
  rowsOf<{
    agent_id: string;
    status: string;
    error_reason: string | null;
    comment_id: string;
    wake_reason: string;
  }>(
    "SELECT agent_id, status, error_reason, comment_id, wake_reason, invocation_source FROM heartbeat_runs WHERE issue_id = ? ORDER BY created_at, rowid",
    issueId,
  );

export async function seedGoal(companyId: string, title = "Grow", description = "Grow revenue") {
  const id = crypto.randomUUID();
  const now = Date.now();
  await env.DB.prepare(
    `INSERT INTO goals (id, company_id, title, description, level, status, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'company', 'active', ?, ?)`,
  )
    .bind(id, companyId, title, description, now, now)
    .run();
  return id;
}

export async function seedProject(companyId: string, name = "Website", description = "The public site") {
  const id = crypto.randomUUID();
  const now = Date.now();
  await env.DB.prepare(
    `INSERT INTO projects (id, company_id, name, description, status, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'active', ?, ?)`,
  )
    .bind(id, companyId, name, description, now, now)
    .run();
  return id;
}

export async function seedLabel(companyId: string, name = `label-${crypto.randomUUID().slice(0, 6)}`) {
  const id = crypto.randomUUID();
  await env.DB.prepare("INSERT INTO labels (id, company_id, name, created_at) VALUES (?, ?, ?, ?)")
    .bind(id, companyId, name, Date.now())
    .run();
  return id;
}

/** "issueId is blocked by blockerId", inserted directly (for suites that need a blocked issue). */
export async function linkBlocker(companyId: string, issueId: string, blockerId: string) {
  await env.DB.prepare(
    "INSERT INTO issue_blockers (issue_id, blocker_issue_id, company_id, created_at) VALUES (?, ?, ?, ?)",
  )
    .bind(issueId, blockerId, companyId, Date.now())
    .run();
}
