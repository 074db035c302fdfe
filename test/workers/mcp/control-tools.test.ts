// The control-plane tools beyond the first five (issue 27): each called through the official SDK
// client, its effect read back from D1 and the REST API; bad arguments and other tenants' ids change
// nothing.
import { env } from "cloudflare:workers";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLS } from "../../../workers/mcp/tools";
import {
  type BoardUser,
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  seedIssue,
  seedTwoTenants,
} from "../control/helpers";
import { call } from "../helpers";
import { callTool, connect, jsonOf, textOf } from "./client";

const countWhere = async (table: string, column: string, value: string) =>
  (
    await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`)
      .bind(value)
      .first<{ n: number }>()
  )?.n ?? 0;

interface IssueJson {
  id: string;
  identifier: string;
  status: string;
  ancestors: Array<{ id: string }>;
  comments: Array<{ id: string; body: string }>;
  nextCommentsAfter?: string;
}

describe("control-plane tools over /mcp", () => {
  let owner: BoardUser;
  let company: SeededCompany;
  let agent: SeededAgent;
  let other: SeededCompany;
  let foreignAgent: SeededAgent;
  let client: Client;

  beforeAll(async () => {
    ({ owner, company, agent, other, foreignAgent } = await seedTwoTenants());
    client = await connect(agent.headers);
  });
  afterAll(() => client.close());

  it("lists the tools with model-facing descriptions, read tools marked read-only", async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of [
      "my_inbox",
      "create_subtask",
      "get_document",
      "ask_question",
      "request_approval",
      "list_approvals",
      "record_document",
      "hand_off",
    ])
      expect(byName.get(name)?.description?.length ?? 0, name).toBeGreaterThan(60);
    expect(byName.get("my_inbox")?.annotations?.readOnlyHint).toBe(true);
    expect(byName.get("list_approvals")?.annotations?.readOnlyHint).toBe(true);
    expect(byName.get("create_subtask")?.inputSchema.required).toEqual(["parentId", "title"]);
    expect(byName.get("hand_off")?.inputSchema.required).toEqual(["issueId", "to", "note"]);
    expect(byName.get("me")?.description).toMatch(/chain of command/i);
  });

  it("read tools need the read scope, writes the control scope", () => {
    const scopes = Object.fromEntries(TOOLS.map((tool) => [tool.name, tool.scope]));
    expect(scopes).toMatchObject({
      me: "read",
      my_inbox: "read",
      get_issue: "read",
      get_document: "read",
      list_approvals: "read",
      create_subtask: "control",
      ask_question: "control",
      record_document: "control",
      hand_off: "control",
      request_approval: "control",
    });
  });

  it("my_inbox answers the calling agent's open assigned issues, nobody else's", async () => {
    const todo = await seedIssue(company, { assigneeAgentId: agent.id, priority: "low" });
    const doing = await seedIssue(company, { assigneeAgentId: agent.id, status: "in_progress" });
    await seedIssue(company, { assigneeAgentId: agent.id, status: "done" });
    await seedIssue(company, { assigneeAgentId: null });
    const inbox = jsonOf<{ issues: Array<{ id: string }> }>(await callTool(client, "my_inbox"));
    expect(inbox.issues.map((issue) => issue.id)).toEqual([doing.id, todo.id]);
    const done = jsonOf<{ issues: Array<{ id: string }> }>(
      await callTool(client, "my_inbox", { status: "done" }),
    );
    expect(done.issues).toHaveLength(1);
    const bad = await callTool(client, "my_inbox", { status: "finished" });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("unknown status finished");
  });

  it("my_inbox with a user key is the board user's Mine inbox", async () => {
    const mine = await seedIssue(company, { createdByUserId: owner.userId });
    const board = await connect(owner.headers);
    const inbox = jsonOf<{ issues: Array<{ id: string }> }>(await callTool(board, "my_inbox"));
    expect(inbox.issues.map((issue) => issue.id)).toContain(mine.id);
    await board.close();
  });

  it("get_issue answers the issue with its ancestors and its comments, paged by after", async () => {
    const parent = await seedIssue(company, { title: "The epic" });
    const child = await seedIssue(company, { parentId: parent.id });
    for (const body of ["first", "second", "third"])
      await call("POST", `/api/issues/${child.id}/comments`, { headers: owner.headers, body: { body } });
    const read = jsonOf<IssueJson>(await callTool(client, "get_issue", { issueId: child.identifier }));
    expect(read.id).toBe(child.id);
    expect(read.ancestors.map((ancestor) => ancestor.id)).toEqual([parent.id]);
    expect(read.comments.map((comment) => comment.body)).toEqual(["first", "second", "third"]);
    const page = jsonOf<IssueJson>(
      await callTool(client, "get_issue", { issueId: child.id, limit: 1, after: read.comments[0]?.id }),
    );
    expect(page.comments.map((comment) => comment.body)).toEqual(["second"]);
    expect(page.nextCommentsAfter).toBe(page.comments[0]?.id);
  });

  it("create_subtask files a child issue of the parent, in the parent's company", async () => {
    const parent = await seedIssue(company);
    const colleague = await seedAgent(company.id);
    const created = jsonOf<{ id: string; parentId: string; status: string }>(
      await callTool(client, "create_subtask", {
        parentId: parent.identifier,
        title: "Write the migration",
        assigneeAgentId: colleague.id,
      }),
    );
    const row = await env.DB.prepare(
      "SELECT company_id, parent_id, status, assignee_agent_id, created_by_agent_id FROM issues WHERE id = ?",
    )
      .bind(created.id)
      .first();
    expect(row).toEqual({
      company_id: company.id,
      parent_id: parent.id,
      status: "todo",
      assignee_agent_id: colleague.id,
      created_by_agent_id: agent.id,
    });
  });

  it("create_subtask refuses bad arguments and another company's parent, creating nothing", async () => {
    const parent = await seedIssue(company);
    const theirs = await seedIssue(other);
    const untitled = await callTool(client, "create_subtask", { parentId: parent.id });
    expect(untitled.isError).toBe(true);
    expect(textOf(untitled)).toMatch(/title/);
    const foreign = await callTool(client, "create_subtask", { parentId: theirs.id, title: "Sneak in" });
    expect(foreign.isError).toBe(true);
    expect(textOf(foreign)).toContain("HTTP 404");
    expect(await countWhere("issues", "parent_id", parent.id)).toBe(0);
    expect(await countWhere("issues", "parent_id", theirs.id)).toBe(0);
  });

  it("ask_question records a pending question by the agent; blank or foreign ones change nothing", async () => {
    const issue = await seedIssue(company, { assigneeAgentId: agent.id });
    const asked = jsonOf<{ id: string; status: string }>(
      await callTool(client, "ask_question", { issueId: issue.identifier, body: "Which region?" }),
    );
    const row = await env.DB.prepare(
      "SELECT issue_id, body, asked_by_agent_id, answer FROM issue_questions WHERE id = ?",
    )
      .bind(asked.id)
      .first();
    expect(row).toEqual({
      issue_id: issue.id,
      body: "Which region?",
      asked_by_agent_id: agent.id,
      answer: null,
    });
    const blank = await callTool(client, "ask_question", { issueId: issue.id, body: "   " });
    expect(blank.isError).toBe(true);
    expect(textOf(blank)).toMatch(/blank/);
    const theirs = await seedIssue(other);
    const foreign = await callTool(client, "ask_question", { issueId: theirs.id, body: "Hello?" });
    expect(textOf(foreign)).toContain("HTTP 404");
    expect(await countWhere("issue_questions", "issue_id", issue.id)).toBe(1);
    expect(await countWhere("issue_questions", "issue_id", theirs.id)).toBe(0);
  });

  it("request_approval files a pending board approval linked to the issue; list_approvals finds it", async () => {
    const issue = await seedIssue(company, { assigneeAgentId: agent.id });
    const approval = jsonOf<{ id: string; type: string; status: string; requestedByAgentId: string }>(
      await callTool(client, "request_approval", {
        payload: { summary: "Spend 40 USD on a domain" },
        issueIds: [issue.identifier],
      }),
    );
    expect(approval).toMatchObject({
      type: "request_board_approval",
      status: "pending",
      requestedByAgentId: agent.id,
    });
    expect(await countWhere("issue_approvals", "approval_id", approval.id)).toBe(1);
    const pending = jsonOf<{ approvals: Array<{ id: string }> }>(
      await callTool(client, "list_approvals", { status: "pending" }),
    );
    expect(pending.approvals.map((row) => row.id)).toContain(approval.id);
    const decided = jsonOf<{ approvals: Array<{ id: string }> }>(
      await callTool(client, "list_approvals", { status: "approved,rejected" }),
    );
    expect(decided.approvals.map((row) => row.id)).not.toContain(approval.id);
    const viaRest = await call<Array<{ id: string }>>("GET", `/api/issues/${issue.id}/approvals`, {
      headers: owner.headers,
    });
    expect(viaRest.body.map((row) => row.id)).toEqual([approval.id]);
  });

  it("request_approval and list_approvals refuse bad arguments and other companies", async () => {
    const before = await countWhere("approvals", "company_id", company.id);
    const noPayload = await callTool(client, "request_approval", { issueIds: [] });
    expect(noPayload.isError).toBe(true);
    expect(textOf(noPayload)).toMatch(/payload/);
    const theirIssue = await seedIssue(other);
    const foreignLink = await callTool(client, "request_approval", {
      payload: { summary: "x" },
      issueIds: [theirIssue.id],
    });
    expect(foreignLink.isError).toBe(true);
    expect(textOf(foreignLink)).toMatch(/HTTP 4\d\d/);
    const foreignCompany = await callTool(client, "request_approval", {
      companyId: other.id,
      payload: { summary: "x" },
    });
    expect(textOf(foreignCompany)).toContain("HTTP 404");
    expect(textOf(await callTool(client, "list_approvals", { companyId: other.id }))).toContain("HTTP 404");
    expect(await countWhere("approvals", "company_id", company.id)).toBe(before);
    expect(await countWhere("approvals", "company_id", other.id)).toBe(0);

    const board = await connect(owner.headers);
    const withoutCompany = await callTool(board, "list_approvals");
    expect(withoutCompany.isError).toBe(true);
    expect(textOf(withoutCompany)).toMatch(/companyId/);
    expect(jsonOf(await callTool(board, "list_approvals", { companyId: company.id }))).toHaveProperty(
      "approvals",
    );
    await board.close();
    expect(foreignAgent.companyId).toBe(other.id);
  });
});
