// The approve_ceo_strategy gate through HTTP in workerd: until the board approves a strategy the CEO
// requested, the CEO agent cannot move issues to in_progress (checkout or PATCH: 422 with the
// reason); board users and other agents are unaffected.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { type BoardUser, boardUser, type SeededCompany, seedCompany, seedIssue, seedOrg } from "../helpers";

const REASON = "CEO strategy not yet approved";

let owner: BoardUser;

beforeAll(async () => {
  owner = await boardUser();
});

const checkout = (issueId: string, agentId: string, headers: Record<string, string>) =>
  call<{ status?: string; error?: string }>("POST", `/api/issues/${issueId}/checkout`, {
    headers,
    body: { agentId, expectedStatuses: ["todo"] },
  });

const patchStatus = (issueId: string, status: string, headers: Record<string, string>) =>
  call<{ status?: string; error?: string }>("PATCH", `/api/issues/${issueId}`, { headers, body: { status } });

const issueStatus = async (id: string) =>
  (await env.DB.prepare("SELECT status FROM issues WHERE id = ?").bind(id).first<{ status: string }>())
    ?.status;

async function freshOrg(): Promise<{ company: SeededCompany } & Awaited<ReturnType<typeof seedOrg>>> {
  const company = await seedCompany(owner);
  return { company, ...(await seedOrg(company.id)) };
}

async function requestStrategy(companyId: string, headers: Record<string, string>) {
  const res = await call<{ id: string }>("POST", `/api/companies/${companyId}/approvals`, {
    headers,
    body: { type: "approve_ceo_strategy", payload: { plan: "Focus on the MVP" } },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

describe("approve_ceo_strategy gate", () => {
  it("the CEO's checkout is 422 with the reason until its strategy is approved, then 200", async () => {
    const { company, ceo } = await freshOrg();
    const issue = await seedIssue(company);
    const refused = await checkout(issue.id, ceo.id, ceo.headers);
    expect(refused.status).toBe(422);
    expect(refused.body.error).toContain(REASON);
    expect(refused.body.error).toContain("approve_ceo_strategy");
    expect(await issueStatus(issue.id)).toBe("todo");

    const approvalId = await requestStrategy(company.id, ceo.headers);
    // Pending is not enough, nor is a revision request.
    expect((await checkout(issue.id, ceo.id, ceo.headers)).status).toBe(422);
    await call("POST", `/api/approvals/${approvalId}/request-revision`, { headers: owner.headers });
    expect((await checkout(issue.id, ceo.id, ceo.headers)).status).toBe(422);
    await call("POST", `/api/approvals/${approvalId}/resubmit`, { headers: ceo.headers });

    expect(
      (await call("POST", `/api/approvals/${approvalId}/approve`, { headers: owner.headers })).status,
    ).toBe(200);
    const allowed = await checkout(issue.id, ceo.id, ceo.headers);
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect(await issueStatus(issue.id)).toBe("in_progress");
  });

  it("the CEO's PATCH to in_progress is 422 until approved; other PATCHes pass", async () => {
    const { company, ceo } = await freshOrg();
    const issue = await seedIssue(company, { status: "blocked", assigneeAgentId: ceo.id });
    const refused = await patchStatus(issue.id, "in_progress", ceo.headers);
    expect(refused.status).toBe(422);
    expect(refused.body.error).toContain(REASON);
    expect(await issueStatus(issue.id)).toBe("blocked");
    expect((await patchStatus(issue.id, "todo", ceo.headers)).status).toBe(200);

    const approvalId = await requestStrategy(company.id, ceo.headers);
    await call("POST", `/api/approvals/${approvalId}/approve`, { headers: owner.headers });
    await env.DB.prepare("UPDATE issues SET status = 'blocked' WHERE id = ?").bind(issue.id).run();
    const allowed = await patchStatus(issue.id, "in_progress", ceo.headers);
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect(await issueStatus(issue.id)).toBe("in_progress");
  });

  it("a rejected strategy, or one requested by another agent, does not open the gate", async () => {
    const { company, ceo, manager } = await freshOrg();
    const issue = await seedIssue(company);
    const rejected = await requestStrategy(company.id, ceo.headers);
    await call("POST", `/api/approvals/${rejected}/reject`, { headers: owner.headers });
    const byManager = await requestStrategy(company.id, manager.headers);
    await call("POST", `/api/approvals/${byManager}/approve`, { headers: owner.headers });
    expect((await checkout(issue.id, ceo.id, ceo.headers)).status).toBe(422);
  });

  it("board users and other agents are unaffected", async () => {
    const { company, ceo, engineer } = await freshOrg();
    const forEngineer = await seedIssue(company);
    expect((await checkout(forEngineer.id, engineer.id, engineer.headers)).status).toBe(200);
    const boardMoves = await seedIssue(company, { status: "blocked", assigneeAgentId: ceo.id });
    const res = await patchStatus(boardMoves.id, "in_progress", owner.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const boardCheckout = await seedIssue(company);
    expect((await checkout(boardCheckout.id, ceo.id, owner.headers)).status).toBe(200);
  });
});
