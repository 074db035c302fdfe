// An issue is named by its id or its identifier (`ACM-12`, any case) in every body field and query
// parameter that names one, as in the path: parentId, blockedByIssueIds, the list's parentId filter,
// approval issueIds, cost-event issueId, hire sourceIssueIds, the run list's issueId. An identifier of
// another company, or of no issue, is refused as an unknown id is.
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { seedCompany, seedIssue } from "../helpers";
import {
  createIssue,
  type ErrorBody,
  type Issue,
  issueRow,
  listIssues,
  patchIssue,
  rowsOf,
  world,
} from "./fixtures";

type Json = Record<string, unknown>;
type Linked = Issue & { blockedByIssueIds: string[] };

describe("issue identifiers in bodies and queries", () => {
  it("parentId and blockedByIssueIds take identifiers on create and PATCH; the list filters by one", async () => {
    const { owner, company } = await world();
    const parent = await seedIssue(company);
    const blocker = await seedIssue(company);
    const created = await createIssue<Linked>(owner.headers, company, {
      title: "Child",
      parentId: parent.identifier.toLowerCase(),
      blockedByIssueIds: [blocker.identifier],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ parentId: parent.id, blockedByIssueIds: [blocker.id] });

    const other = await seedIssue(company);
    const moved = await patchIssue<Linked>(owner.headers, created.body.id, {
      parentId: other.identifier,
      blockedByIssueIds: [blocker.identifier, other.identifier],
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.parentId).toBe(other.id);
    expect([...moved.body.blockedByIssueIds].sort()).toEqual([blocker.id, other.id].sort());
    expect((await issueRow(created.body.id))?.parent_id).toBe(other.id);

    const children = await listIssues(owner.headers, company, `?parentId=${other.identifier}`);
    expect(children.status).toBe(200);
    expect(children.body.map((issue) => issue.id)).toEqual([created.body.id]);
  });

  it("refuses another company's identifier or an unknown one as it refuses an unknown id (422 naming the field)", async () => {
    const { owner, company } = await world();
    const foreign = await seedIssue(await seedCompany(owner));
    const issue = await seedIssue(company);
    for (const key of [foreign.identifier, "NOPE-1"]) {
      const asParent = await createIssue<ErrorBody>(owner.headers, company, { title: "x", parentId: key });
      expect(asParent.status).toBe(422);
      expect(asParent.body.details).toMatchObject({ field: "parentId" });
      const asBlocker = await patchIssue<ErrorBody>(owner.headers, issue.id, { blockedByIssueIds: [key] });
      expect(asBlocker.status).toBe(422);
      expect(asBlocker.body.details).toMatchObject({ field: "blockedByIssueIds" });
    }
    expect((await issueRow(issue.id))?.parent_id).toBeNull();
    const none = await listIssues(owner.headers, company, `?parentId=${foreign.identifier}`);
    expect(none.body).toEqual([]);
  });

  it("approvals, cost events, hires and the run list take identifiers too", async () => {
    const { owner, company, engineer } = await world();
    const issue = await seedIssue(company);
    const foreign = await seedIssue(await seedCompany(owner));

    const approval = await call<Json>("POST", `/api/companies/${company.id}/approvals`, {
      headers: owner.headers,
      body: {
        type: "request_board_approval",
        payload: { summary: "Buy a domain" },
        issueIds: [issue.identifier],
      },
    });
    expect(approval.status, JSON.stringify(approval.body)).toBe(201);
    const links = await rowsOf<{ issue_id: string }>(
      "SELECT issue_id FROM issue_approvals WHERE approval_id = ?",
      approval.body.id,
    );
    expect(links.map((row) => row.issue_id)).toEqual([issue.id]);
    const badApproval = await call("POST", `/api/companies/${company.id}/approvals`, {
      headers: owner.headers,
      body: { type: "request_board_approval", payload: { summary: "x" }, issueIds: [foreign.identifier] },
    });
    expect(badApproval.status).toBe(422);

    const cost = await call<Json>("POST", `/api/companies/${company.id}/cost-events`, {
      headers: owner.headers,
      body: {
        agentId: engineer.id,
        issueId: issue.identifier,
        provider: "anthropic",
        costCents: 3,
        occurredAt: new Date().toISOString(),
      },
    });
    expect(cost.status, JSON.stringify(cost.body)).toBe(201);
    expect(cost.body.issueId).toBe(issue.id);

    const hire = await call<{ agent: Json }>("POST", `/api/companies/${company.id}/agent-hires`, {
      headers: owner.headers,
      body: {
        name: `Hire ${crypto.randomUUID().slice(0, 6)}`,
        adapterType: "coder_local",
        sourceIssueIds: [issue.identifier],
      },
    });
    expect(hire.status, JSON.stringify(hire.body)).toBe(201);
    expect(hire.body.agent).toMatchObject({ sourceIssueId: issue.id, sourceIssueIds: [issue.id] });

    const invoked = await call<Json>("POST", `/api/agents/${engineer.id}/heartbeat/invoke`, {
      headers: owner.headers,
      body: { issueId: issue.identifier },
    });
    expect(invoked.status, JSON.stringify(invoked.body)).toBe(202);
    const runs = await call<Json[]>(
      "GET",
      `/api/companies/${company.id}/heartbeat-runs?issueId=${issue.identifier}`,
      {
        headers: owner.headers,
      },
    );
    expect(runs.status).toBe(200);
    expect(runs.body.map((run) => run.id)).toEqual([invoked.body.id]);
  });
});
