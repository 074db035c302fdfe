// Issues: create (defaults, identifiers, references), list (order, filters, full-text), detail and
// heartbeat context, and the 404 every route gives for another company's issue.
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { boardUser, seedAgent, seedCompany, seedIssue } from "../helpers";
import {
  actionsOf,
  createIssue,
  type ErrorBody,
  type Issue,
  issueRow,
  listIssues,
  newIssue,
  seedGoal,
  seedLabel,
  seedProject,
  world,
} from "./fixtures";

describe("POST /companies/:id/issues", () => {
  it("applies the defaults, numbers per company and records the creator", async () => {
    const { owner, company, engineer } = await world();
    const plain = await createIssue(owner.headers, company, { title: "  Write the plan  " });
    expect(plain.status).toBe(201);
    expect(plain.body).toMatchObject({
      title: "Write the plan",
      status: "backlog",
      priority: "medium",
      identifier: `${company.issuePrefix}-1`,
      issueNumber: 1,
      createdByUserId: owner.userId,
      createdByAgentId: null,
      labelIds: [],
    });
    const assigned = await newIssue(engineer.headers, company, {
      assigneeAgentId: engineer.id,
      priority: "high",
    });
    expect(assigned).toMatchObject({
      status: "todo",
      identifier: `${company.issuePrefix}-2`,
      priority: "high",
    });
    expect(assigned.createdByAgentId).toBe(engineer.id);
    const other = await seedCompany(owner);
    expect((await newIssue(owner.headers, other)).identifier).toBe(`${other.issuePrefix}-1`);
    expect(await issueRow(assigned.id)).toMatchObject({ priority_rank: 1, created_by_agent_id: engineer.id });
    expect(await actionsOf(plain.body.id)).toEqual(["issue.created"]);
  });

  it("gives 20 concurrent creates 20 distinct, gapless numbers", async () => {
    const { owner, company } = await world();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, n) => createIssue(owner.headers, company, { title: `Parallel ${n}` })),
    );
    expect(results.map((res) => res.status)).toEqual(Array(20).fill(201));
    const numbers = results.map((res) => res.body.issueNumber).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, n) => n + 1));
  });

  it("links parent, project, goal, labels and a board assignee", async () => {
    const member = await boardUser();
    const { owner, company } = await world({ members: [member] });
    const [projectId, goalId, label] = [
      await seedProject(company.id),
      await seedGoal(company.id),
      await seedLabel(company.id),
    ];
    const parent = await newIssue(owner.headers, company);
    const child = await newIssue(owner.headers, company, {
      parentId: parent.id,
      projectId,
      goalId,
      labelIds: [label, label],
      assigneeUserId: member.userId,
      description: "Details",
    });
    expect(child).toMatchObject({
      parentId: parent.id,
      projectId,
      goalId,
      labelIds: [label],
      status: "todo",
    });
    expect(child.assigneeUserId).toBe(member.userId);
  });

  it("answers 422 naming the field for references outside the company and unassignable agents", async () => {
    const { owner, company, engineer } = await world();
    const elsewhere = await seedCompany(owner);
    const foreignAgent = await seedAgent(elsewhere.id);
    const foreignIssue = await seedIssue(elsewhere);
    const pending = await seedAgent(company.id, { status: "pending_approval" });
    const terminated = await seedAgent(company.id, { status: "terminated" });
    const stranger = await boardUser();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ assigneeAgentId: foreignAgent.id }, "assigneeAgentId"],
      [{ assigneeAgentId: pending.id }, "assigneeAgentId"],
      [{ assigneeAgentId: terminated.id }, "assigneeAgentId"],
      [{ assigneeUserId: stranger.userId }, "assigneeUserId"],
      [{ parentId: foreignIssue.id }, "parentId"],
      [{ projectId: await seedProject(elsewhere.id) }, "projectId"],
      [{ goalId: await seedGoal(elsewhere.id) }, "goalId"],
      [{ labelIds: [await seedLabel(elsewhere.id)] }, "labelIds"],
      [{ assigneeAgentId: engineer.id, assigneeUserId: owner.userId }, "assignee"],
      [{ status: "in_progress", assigneeAgentId: engineer.id }, "status"],
      [{ status: "done" }, "status"],
    ];
    for (const [fields, field] of cases) {
      const res = await createIssue<ErrorBody>(owner.headers, company, { title: "x", ...fields });
      expect(res.status, JSON.stringify(fields)).toBe(422);
      expect(res.body.error).toContain(field);
    }
    const rows = await call<Issue[]>("GET", `/api/companies/${company.id}/issues`, {
      headers: owner.headers,
    });
    expect(rows.body).toEqual([]);
  });

  it("answers 400 for bad bodies and 404 for a company the caller cannot see", async () => {
    const { owner, company, engineer } = await world();
    for (const body of [
      {},
      { title: "" },
      { title: "x".repeat(501) },
      { title: "x", extra: 1 },
      { title: 5 },
    ])
      expect((await createIssue(owner.headers, company, body)).status).toBe(400);
    expect((await createIssue(owner.headers, company, { title: "x", priority: "urgent" })).status).toBe(400);
    const raw = await call("POST", `/api/companies/${company.id}/issues`, {
      headers: { ...owner.headers, "content-type": "application/json" },
      rawBody: "{nope",
    });
    expect(raw.status).toBe(400);
    const other = await world();
    expect((await createIssue(other.owner.headers, company, { title: "x" })).status).toBe(404);
    expect((await createIssue(engineer.headers, other.company, { title: "x" })).status).toBe(404);
  });
});

describe("GET /companies/:id/issues", () => {
  it("sorts by priority, then creation, and filters", async () => {
    const member = await boardUser();
    const { owner, company, engineer, peer } = await world({ members: [member] });
    const projectId = await seedProject(company.id);
    const label = await seedLabel(company.id);
    const low = await newIssue(owner.headers, company, { priority: "low", assigneeAgentId: engineer.id });
    const critical = await newIssue(owner.headers, company, { priority: "critical", projectId });
    const mediumA = await newIssue(owner.headers, company, {
      labelIds: [label],
      assigneeUserId: member.userId,
    });
    const mediumB = await newIssue(owner.headers, company, {
      parentId: critical.id,
      assigneeAgentId: peer.id,
    });
    const all = await listIssues(engineer.headers, company);
    expect(all.status).toBe(200);
    expect(all.body.map((issue) => issue.id)).toEqual([critical.id, mediumA.id, mediumB.id, low.id]);
    const ids = async (query: string) =>
      (await listIssues(owner.headers, company, query)).body.map((i) => i.id);
    expect(await ids(`?assigneeAgentId=${engineer.id}`)).toEqual([low.id]);
    expect(await ids(`?assigneeUserId=${member.userId}`)).toEqual([mediumA.id]);
    expect(await ids(`?projectId=${projectId}`)).toEqual([critical.id]);
    expect(await ids(`?labelId=${label}`)).toEqual([mediumA.id]);
    expect(await ids(`?parentId=${critical.id}`)).toEqual([mediumB.id]);
    expect(await ids("?status=todo")).toEqual([mediumA.id, mediumB.id, low.id]);
    expect(await ids("?status=backlog,%20todo")).toEqual([critical.id, mediumA.id, mediumB.id, low.id]);
    expect(await ids("?limit=2&offset=1")).toEqual([mediumA.id, mediumB.id]);
    expect((await listIssues(owner.headers, company, "?status=todo,doing")).status).toBe(400);
    expect((await listIssues(owner.headers, company, "?limit=501")).status).toBe(400);
  });

  it("searches title, identifier, description and comments with prefix terms, ANDed", async () => {
    const { owner, company } = await world();
    const other = await world();
    const title = await newIssue(owner.headers, company, { title: "Refactor payment gateway" });
    const described = await newIssue(owner.headers, company, { description: "The invoice total is wrong" });
    const commented = await newIssue(owner.headers, company, { title: "Quiet" });
    await call("POST", `/api/issues/${commented.id}/comments`, {
      headers: owner.headers,
      body: { body: "Customer reports kubernetes crash" },
    });
    await newIssue(other.owner.headers, other.company, { title: "Refactor payment elsewhere" });
    const ids = async (q: string) =>
      (await listIssues(owner.headers, company, `?q=${encodeURIComponent(q)}`)).body.map((i) => i.id);
    expect(await ids("payment")).toEqual([title.id]);
    expect(await ids("PAYM")).toEqual([title.id]);
    expect(await ids("invoice total")).toEqual([described.id]);
    expect(await ids("kubernetes")).toEqual([commented.id]);
    expect(await ids("quiet kubernetes")).toEqual([commented.id]);
    expect(await ids("payment invoice")).toEqual([]);
    expect(await ids(described.identifier)).toEqual([described.id]);
    expect(
      (await listIssues(owner.headers, company, `?q=${encodeURIComponent('"pay* OR -(x')}`)).status,
    ).toBe(200);
    expect(await ids('pay"ment')).toEqual([]);
  });
});

describe("GET /issues/:id", () => {
  it("returns project, goal, labels and three levels of ancestors, by id or identifier", async () => {
    const { owner, company, engineer } = await world();
    const goalId = await seedGoal(company.id, "Launch", "Launch in Q3");
    const projectId = await seedProject(company.id, "Site", "Marketing site");
    const label = await seedLabel(company.id);
    const root = await newIssue(owner.headers, company, { title: "Root", goalId, description: "Top" });
    const middle = await newIssue(owner.headers, company, { title: "Middle", parentId: root.id, projectId });
    const parent = await newIssue(owner.headers, company, { title: "Parent", parentId: middle.id });
    const leaf = await newIssue(owner.headers, company, {
      parentId: parent.id,
      projectId,
      goalId,
      labelIds: [label],
    });
    const res = await call<
      Issue & { project: unknown; goal: unknown; ancestors: Array<Record<string, unknown>> }
    >("GET", `/api/issues/${leaf.id}`, { headers: engineer.headers });
    expect(res.status).toBe(200);
    expect(res.body.labelIds).toEqual([label]);
    expect(res.body.project).toMatchObject({ id: projectId, name: "Site", description: "Marketing site" });
    expect(res.body.goal).toMatchObject({ id: goalId, title: "Launch", description: "Launch in Q3" });
    expect(res.body.ancestors.map((a) => a.title)).toEqual(["Parent", "Middle", "Root"]);
    expect(res.body.ancestors[1]).toMatchObject({ projectId, project: { name: "Site" }, goal: null });
    expect(res.body.ancestors[2]).toMatchObject({
      identifier: root.identifier,
      status: "backlog",
      priority: "medium",
      description: "Top",
      assigneeAgentId: null,
      goal: { title: "Launch", description: "Launch in Q3" },
      project: null,
    });
    const byIdentifier = await call<Issue>("GET", `/api/issues/${leaf.identifier.toLowerCase()}`, {
      headers: owner.headers,
    });
    expect(byIdentifier.status).toBe(200);
    expect(byIdentifier.body.id).toBe(leaf.id);
    const bare = await call<{ project: unknown; goal: unknown; ancestors: unknown[] }>(
      "GET",
      `/api/issues/${root.id}`,
      {
        headers: owner.headers,
      },
    );
    expect(bare.body).toMatchObject({ project: null, ancestors: [] });
  });
});

describe("GET /issues/:id after a change to the issue", () => {
  it("shows every mutation of the issue at once, although the detail is served from memory", async () => {
    const { owner, company, engineer } = await world();
    const label = await seedLabel(company.id);
    const issue = await newIssue(owner.headers, company, { title: "Before", status: "todo" });
    const detail = async () =>
      (
        await call<Issue & { labelIds: string[] }>("GET", `/api/issues/${issue.id}`, {
          headers: engineer.headers,
        })
      ).body;
    expect((await detail()).title).toBe("Before");
    const patched = await call("PATCH", `/api/issues/${issue.id}`, {
      headers: owner.headers,
      body: { title: "After", labelIds: [label] },
    });
    expect(patched.status).toBe(200);
    expect(await detail()).toMatchObject({ title: "After", labelIds: [label] });
    const checkout = await call("POST", `/api/issues/${issue.id}/checkout`, {
      headers: engineer.headers,
      body: { agentId: engineer.id, expectedStatuses: ["todo"] },
    });
    expect(checkout.status).toBe(200);
    expect(await detail()).toMatchObject({ status: "in_progress", assigneeAgentId: engineer.id });
    const released = await call("POST", `/api/issues/${issue.id}/release`, { headers: engineer.headers });
    expect(released.status).toBe(200);
    expect(await detail()).toMatchObject({ status: "todo", assigneeAgentId: null });
  });
});

describe("GET /issues/:id/heartbeat-context", () => {
  it("carries the issue, ancestor summaries, the last 20 comments, the cursor and a budget hint", async () => {
    const { owner, company } = await world();
    const agent = await seedAgent(company.id, { budgetMonthlyCents: 1000, spentMonthlyCents: 850 });
    const projectId = await seedProject(company.id, "API", "Public API");
    const parent = await newIssue(owner.headers, company, { title: "Epic" });
    const issue = await newIssue(owner.headers, company, {
      parentId: parent.id,
      projectId,
      assigneeAgentId: agent.id,
    });
    for (let n = 1; n <= 22; n++)
      await call("POST", `/api/issues/${issue.id}/comments`, {
        headers: owner.headers,
        body: { body: `note ${n}` },
      });
    type Context = {
      issue: Record<string, unknown>;
      ancestors: unknown[];
      project: unknown;
      goal: unknown;
      comments: { total: number; latest: Array<{ id: string; body: string }> };
      commentCursor: string;
      budget?: Record<string, unknown>;
    };
    const res = await call<Context>("GET", `/api/issues/${issue.identifier}/heartbeat-context`, {
      headers: agent.headers,
    });
    expect(res.status).toBe(200);
    expect(res.body.issue).toMatchObject({ id: issue.id, status: "todo", assigneeAgentId: agent.id });
    expect(res.body.ancestors).toEqual([
      { id: parent.id, identifier: parent.identifier, title: "Epic", status: "backlog" },
    ]);
    expect(res.body.project).toEqual({ id: projectId, name: "API", description: "Public API" });
    expect(res.body.goal).toBeNull();
    expect(res.body.comments.total).toBe(22);
    expect(res.body.comments.latest.map((c) => c.body)).toEqual(
      Array.from({ length: 20 }, (_, n) => `note ${n + 3}`),
    );
    expect(res.body.commentCursor).toBe(res.body.comments.latest[19]?.id);
    expect(res.body.budget).toEqual({
      spentMonthlyCents: 850,
      budgetMonthlyCents: 1000,
      utilizationPercent: 85,
      guidance: "prioritise",
    });
    const board = await call<Context>("GET", `/api/issues/${parent.id}/heartbeat-context`, {
      headers: owner.headers,
    });
    expect(board.body.budget).toBeUndefined();
    expect(board.body).toMatchObject({
      comments: { total: 0, latest: [] },
      commentCursor: null,
      ancestors: [],
    });
  });
});

describe("another company's issue", () => {
  it("is a 404 on every route, for agents and board users, as is an unknown id", async () => {
    const { owner, company } = await world();
    const issue = await newIssue(owner.headers, company, { title: "Secret" });
    const comment = await call<{ id: string }>("POST", `/api/issues/${issue.id}/comments`, {
      headers: owner.headers,
      body: { body: "hidden" },
    });
    const outsider = await world();
    const routes: Array<[string, string, unknown?]> = [
      ["GET", `/api/issues/${issue.id}`],
      ["GET", `/api/issues/${issue.identifier}`],
      ["GET", `/api/issues/${issue.id}/heartbeat-context`],
      ["PATCH", `/api/issues/${issue.id}`, { title: "Mine now" }],
      ["GET", `/api/issues/${issue.id}/comments`],
      ["GET", `/api/issues/${issue.id}/comments/${comment.body.id}`],
      ["POST", `/api/issues/${issue.id}/comments`, { body: "hi" }],
      ["POST", `/api/issues/${issue.id}/read`],
      ["GET", `/api/companies/${company.id}/issues`],
      ["POST", `/api/companies/${company.id}/issues`, { title: "x" }],
    ];
    for (const headers of [outsider.owner.headers, outsider.engineer.headers]) {
      for (const [method, path, body] of routes) {
        const res = await call(method, path, { headers, body });
        expect(res.status, `${method} ${path}`).toBe(404);
      }
    }
    expect((await call("GET", `/api/issues/${crypto.randomUUID()}`, { headers: owner.headers })).status).toBe(
      404,
    );
    expect((await call("GET", "/api/issues/NOPE-1", { headers: owner.headers })).status).toBe(404);
    expect(
      (
        await call("GET", `/api/issues/${issue.id}/comments/${crypto.randomUUID()}`, {
          headers: owner.headers,
        })
      ).status,
    ).toBe(404);
    expect((await issueRow(issue.id))?.title).toBe("Secret");
  });
});
