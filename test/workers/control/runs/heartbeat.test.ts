// The agent heartbeat from the spec, end to end through HTTP as one agent would run it:
// me → my open issues → check out the most urgent todo → read its context → PATCH status + comment.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { boardUser, seedAgent, seedCompany, seedIssue } from "../helpers";

type Issue = {
  id: string;
  identifier: string;
  status: string;
  priority: string;
  assigneeAgentId: string | null;
};

describe("an agent heartbeat", () => {
  it("walks me → inbox → checkout → context → PATCH with comment", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const ceo = await seedAgent(company.id, { name: "Chief", role: "ceo" });
    const agent = await seedAgent(company.id, { name: "Builder", reportsTo: ceo.id });
    const parent = await seedIssue(company, {
      title: "Ship v1",
      status: "todo",
      createdByUserId: owner.userId,
    });
    const low = await seedIssue(company, {
      title: "Polish docs",
      priority: "low",
      assigneeAgentId: agent.id,
    });
    const urgent = await seedIssue(company, {
      title: "Fix login",
      priority: "critical",
      assigneeAgentId: agent.id,
      parentId: parent.id,
    });
    await seedIssue(company, { title: "Someone else's", priority: "critical" });

    const me = await call<{ id: string; chainOfCommand: Array<{ id: string }> }>("GET", "/api/agents/me", {
      headers: agent.headers,
    });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(agent.id);
    expect(me.body.chainOfCommand.map((m) => m.id)).toEqual([ceo.id]);

    const inbox = await call<Issue[]>(
      "GET",
      `/api/companies/${company.id}/issues?assigneeAgentId=${agent.id}&status=todo,in_progress,blocked`,
      { headers: agent.headers },
    );
    expect(inbox.status).toBe(200);
    expect(inbox.body.map((issue) => issue.id)).toEqual([urgent.id, low.id]);

    const checkout = await call<Issue>("POST", `/api/issues/${urgent.id}/checkout`, {
      headers: agent.headers,
      body: { agentId: agent.id, expectedStatuses: ["todo"] },
    });
    expect(checkout.status).toBe(200);
    expect(checkout.body.status).toBe("in_progress");

    const context = await call<{ issue: { id: string; status: string }; ancestors: Array<{ id: string }> }>(
      "GET",
      `/api/issues/${urgent.id}/heartbeat-context`,
      { headers: agent.headers },
    );
    expect(context.status).toBe(200);
    expect(context.body.issue.status).toBe("in_progress");
    expect(context.body.ancestors.map((a) => a.id)).toEqual([parent.id]);

    const done = await call<Issue & { completed_at: string | null }>("PATCH", `/api/issues/${urgent.id}`, {
      headers: agent.headers,
      body: { status: "done", comment: "Fixed the session cookie; tests added." },
    });
    expect(done.status).toBe(200);
    expect(done.body.status).toBe("done");
    expect(done.body.completed_at).not.toBeNull();

    const comments = await env.DB.prepare(
      "SELECT body, author_agent_id FROM issue_comments WHERE issue_id = ?",
    )
      .bind(urgent.id)
      .all<{ body: string; author_agent_id: string }>();
    expect(comments.results).toEqual([
      { body: "Fixed the session cookie; tests added.", author_agent_id: agent.id },
    ]);

    const actions = await env.DB.prepare(
      "SELECT action FROM activity_log WHERE entity_id = ? AND actor_id = ? ORDER BY created_at, rowid",
    )
      .bind(urgent.id, agent.id)
      .all<{ action: string }>();
    expect(actions.results.map((row) => row.action)).toContain("issue.checked_out");

    const again = await call<Issue[]>(
      "GET",
      `/api/companies/${company.id}/issues?assigneeAgentId=${agent.id}&status=todo,in_progress,blocked`,
      { headers: agent.headers },
    );
    expect(again.body.map((issue) => issue.id)).toEqual([low.id]);
  });

  it("on a 409 from checkout the issue stays with its holder", async () => {
    const company = await seedCompany(await boardUser());
    const first = await seedAgent(company.id);
    const second = await seedAgent(company.id);
    const issue = await seedIssue(company, { status: "todo" });
    const win = await call("POST", `/api/issues/${issue.id}/checkout`, {
      headers: first.headers,
      body: { agentId: first.id, expectedStatuses: ["todo"] },
    });
    expect(win.status).toBe(200);
    const lose = await call<{ error: string; details: { assigneeAgentId: string } }>(
      "POST",
      `/api/issues/${issue.id}/checkout`,
      { headers: second.headers, body: { agentId: second.id, expectedStatuses: ["todo", "in_progress"] } },
    );
    expect(lose.status).toBe(409);
    expect(lose.body.details.assigneeAgentId).toBe(first.id);
  });
});
