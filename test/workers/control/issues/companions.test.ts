// An operation's reads ride in the batch that reads the issue's row (workers/control/issues/apply.ts,
// `COMPANIONS`): scoped to the location the Worker resolved, which must be the row's own company.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { applyIssueOperation } from "../../../../workers/control/issues/apply";
import { database } from "../../../../workers/db/client";
import { seedIssue, seedTwoTenants } from "../helpers";

const commentsOn = async (issueId: string) =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM issue_comments WHERE issue_id = ?")
      .bind(issueId)
      .first<{ n: number }>()
  )?.n;

describe("an operation's companion reads", () => {
  it("a location naming another company than the issue's is no issue: 404, nothing written", async () => {
    const { company, agent, other, foreignAgent } = await seedTwoTenants();
    const issue = await seedIssue(company, { status: "todo", assigneeAgentId: agent.id });
    const db = database(env.DB);
    const asOutsider = { type: "agent" as const, agentId: foreignAgent.id, companyId: other.id };
    const wrong = { id: issue.id, companyId: other.id };
    for (const op of [
      { kind: "comment" as const, actor: asOutsider, input: { body: `@${foreignAgent.name} look` } },
      { kind: "update" as const, actor: asOutsider, input: { title: "Taken over", comment: "mine" } },
    ]) {
      const outcome = await applyIssueOperation(db, wrong, op);
      expect(outcome).toMatchObject({ ok: false, status: 404 });
    }
    expect(await commentsOn(issue.id)).toBe(0);
    const row = await env.DB.prepare("SELECT title FROM issues WHERE id = ?")
      .bind(issue.id)
      .first<{ title: string }>();
    expect(row?.title).not.toBe("Taken over");
    // The right location does what the wrong one could not.
    const mine = { type: "agent" as const, agentId: agent.id, companyId: company.id };
    const outcome = await applyIssueOperation(
      db,
      { id: issue.id, companyId: company.id },
      {
        kind: "comment",
        actor: mine,
        input: { body: "on it" },
      },
    );
    expect(outcome).toMatchObject({ ok: true, status: 201 });
    expect(await commentsOn(issue.id)).toBe(1);
  });
});
