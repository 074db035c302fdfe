// Approval links on issues through HTTP in workerd: link (201, then 200 idempotent), list, unlink,
// and the company boundary (an approval or issue of another company is unknown: 404).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import {
  activityOf,
  type BoardUser,
  boardUser,
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  seedCompany,
  seedIssue,
  seedTenant,
} from "../helpers";

interface ApprovalBody {
  id: string;
  companyId: string;
  type: string;
  status: string;
  payload: Record<string, unknown>;
  requestedByAgentId: string | null;
}

/** An approval inserted straight into D1 (the approvals API has its own suite). */
async function seedApproval(
  companyId: string,
  requestedByAgentId: string | null = null,
  type = "hire_agent",
) {
  const id = crypto.randomUUID();
  const now = Date.now();
  await env.DB.prepare(
    `INSERT INTO approvals (id, company_id, type, status, payload, requested_by_agent_id, created_at, updated_at)
     VALUES (?, ?, ?, 'pending', ?, ?, ?, ?)`,
  )
    .bind(
      id,
      companyId,
      type,
      JSON.stringify({ name: "New hire", role: "engineer" }),
      requestedByAgentId,
      now,
      now,
    )
    .run();
  return id;
}

const linkRows = (issueId: string) =>
  env.DB.prepare(
    "SELECT approval_id, linked_by_agent_id, linked_by_user_id FROM issue_approvals WHERE issue_id = ? ORDER BY created_at",
  )
    .bind(issueId)
    .all<{ approval_id: string; linked_by_agent_id: string | null; linked_by_user_id: string | null }>()
    .then((result) => result.results);

const approvalsPath = (issueId: string) => `/api/issues/${issueId}/approvals`;
const link = (issueId: string, headers: Record<string, string>, body: unknown) =>
  call<ApprovalBody>("POST", approvalsPath(issueId), { headers, body });

let board: BoardUser;
let company: SeededCompany;
let agent: SeededAgent;

beforeAll(async () => {
  ({ board, company, agent } = await seedTenant());
});

describe("issue approval links", () => {
  it("links (201), links again idempotently (200), lists, unlinks (204); rows and activity agree", async () => {
    const issue = await seedIssue(company);
    const first = await seedApproval(company.id, agent.id);
    const second = await seedApproval(company.id, null, "approve_ceo_strategy");

    const linked = await link(issue.id, agent.headers, { approvalId: first });
    expect(linked.status, JSON.stringify(linked.body)).toBe(201);
    expect(linked.body).toMatchObject({
      id: first,
      companyId: company.id,
      type: "hire_agent",
      status: "pending",
      payload: { name: "New hire", role: "engineer" },
      requestedByAgentId: agent.id,
    });
    const again = await link(issue.id, agent.headers, { approvalId: first });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first);
    expect((await link(issue.id, board.headers, { approvalId: second })).status).toBe(201);

    expect(await linkRows(issue.id)).toEqual([
      { approval_id: first, linked_by_agent_id: agent.id, linked_by_user_id: null },
      { approval_id: second, linked_by_agent_id: null, linked_by_user_id: board.userId },
    ]);
    const list = await call<ApprovalBody[]>("GET", approvalsPath(issue.id), { headers: agent.headers });
    expect(list.status).toBe(200);
    expect(list.body.map((approval) => approval.id)).toEqual([first, second]);

    const unlinked = await call("DELETE", `${approvalsPath(issue.id)}/${first}`, { headers: agent.headers });
    expect(unlinked.status).toBe(204);
    expect((await linkRows(issue.id)).map((row) => row.approval_id)).toEqual([second]);
    expect(
      (await call("DELETE", `${approvalsPath(issue.id)}/${first}`, { headers: board.headers })).status,
    ).toBe(404);
    // The approval itself stays; only the link goes.
    const stillThere = await env.DB.prepare("SELECT id FROM approvals WHERE id = ?").bind(first).first();
    expect(stillThere).not.toBeNull();

    expect((await activityOf(issue.id)).map((entry) => entry.action)).toEqual([
      "issue.approval_linked",
      "issue.approval_linked",
      "issue.approval_unlinked",
    ]);
  });

  it("answers 404 for an approval of another company or an unknown one (nothing linked)", async () => {
    const issue = await seedIssue(company);
    const stranger = await boardUser();
    const other = await seedCompany(stranger);
    const foreign = await seedApproval(other.id);
    expect((await link(issue.id, board.headers, { approvalId: foreign })).status).toBe(404);
    expect((await link(issue.id, board.headers, { approvalId: crypto.randomUUID() })).status).toBe(404);
    expect(await linkRows(issue.id)).toEqual([]);
    // Even a user who is a member of both companies cannot link across them.
    const both = await seedCompany(board);
    const theirs = await seedApproval(both.id);
    expect((await link(issue.id, board.headers, { approvalId: theirs })).status).toBe(404);
  });

  it("answers 404 for another company's issue, to its board users and agents alike", async () => {
    const issue = await seedIssue(company);
    const approval = await seedApproval(company.id);
    expect((await link(issue.id, board.headers, { approvalId: approval })).status).toBe(201);
    const stranger = await boardUser();
    const other = await seedCompany(stranger);
    const outsider = await seedAgent(other.id);
    for (const headers of [stranger.headers, outsider.headers]) {
      expect((await call("GET", approvalsPath(issue.id), { headers })).status).toBe(404);
      expect((await link(issue.id, headers, { approvalId: approval })).status).toBe(404);
      expect((await call("DELETE", `${approvalsPath(issue.id)}/${approval}`, { headers })).status).toBe(404);
    }
    expect((await linkRows(issue.id)).length).toBe(1);
    expect((await call("GET", approvalsPath(crypto.randomUUID()), { headers: board.headers })).status).toBe(
      404,
    );
  });

  it("rejects malformed bodies with 400", async () => {
    const issue = await seedIssue(company);
    const approval = await seedApproval(company.id);
    for (const body of [{}, { approvalId: "nope" }, { approvalId: approval, note: "x" }]) {
      expect((await link(issue.id, board.headers, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect(await linkRows(issue.id)).toEqual([]);
  });
});
