// DELETE /issues/:id (board only: children move up, dependents are freed, queued runs cancelled) and
// cancelling from the board (PATCH status cancelled releases the checkout).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { seedIssue } from "../helpers";
import {
  actionsOf,
  type ErrorBody,
  issueRow,
  linkBlocker,
  patchIssue,
  rowsOf,
  wakesOf,
  world,
} from "./fixtures";

const remove = (headers: Record<string, string>, issueId: string) =>
  call<ErrorBody>("DELETE", `/api/issues/${issueId}`, { headers });

describe("DELETE /issues/:id", () => {
  it("deletes the issue and what hangs off it, moves its children up and logs it", async () => {
    const { owner, company, engineer } = await world();
    const grandparent = await seedIssue(company);
    const parent = await seedIssue(company, { parentId: grandparent.id, assigneeAgentId: engineer.id });
    const child = await seedIssue(company, { parentId: parent.id });
    expect(
      (
        await call("POST", `/api/issues/${parent.id}/comments`, {
          headers: owner.headers,
          body: { body: "hi" },
        })
      ).status,
    ).toBe(201);
    expect(await wakesOf(parent.id)).toHaveLength(1);
    const res = await remove(owner.headers, parent.identifier);
    expect(res.status).toBe(204);
    expect(await issueRow(parent.id)).toBeNull();
    expect((await issueRow(child.id))?.parent_id).toBe(grandparent.id);
    expect(await rowsOf("SELECT id FROM issue_comments WHERE issue_id = ?", parent.id)).toEqual([]);
    expect(await wakesOf(parent.id)).toEqual([
      expect.objectContaining({ status: "cancelled", error_reason: "issue_deleted" }),
    ]);
    expect(await actionsOf(parent.id)).toContain("issue.deleted");
    expect((await call("GET", `/api/issues/${parent.id}`, { headers: owner.headers })).status).toBe(404);
    expect((await remove(owner.headers, parent.id)).status).toBe(404);
    // This isolate still knows where the issue lived (the locator): its IssueDO finds no row.
    const comment = await call("POST", `/api/issues/${parent.id}/comments`, {
      headers: engineer.headers,
      body: { body: "too late" },
    });
    expect(comment.status).toBe(404);
    expect((await patchIssue(engineer.headers, parent.id, { status: "in_progress" })).status).toBe(404);
    expect(await rowsOf("SELECT id FROM issue_comments WHERE issue_id = ?", parent.id)).toEqual([]);
  });

  it("frees dependents whose last unresolved blocker it was, waking their assignee", async () => {
    const { owner, company, engineer } = await world();
    const blocker = await seedIssue(company);
    const dependent = await seedIssue(company, { status: "blocked", assigneeAgentId: engineer.id });
    await linkBlocker(company.id, dependent.id, blocker.id);
    expect((await remove(owner.headers, blocker.id)).status).toBe(204);
    expect(await rowsOf("SELECT * FROM issue_blockers WHERE issue_id = ?", dependent.id)).toEqual([]);
    expect(await wakesOf(dependent.id)).toEqual([
      expect.objectContaining({ agent_id: engineer.id, wake_reason: "issue_blockers_resolved" }),
    ]);
  });

  it("is the board's: agents get 403, other companies' users 404, and nothing is deleted", async () => {
    const { company, engineer, ceo } = await world();
    const outsider = await world();
    const issue = await seedIssue(company, { createdByAgentId: engineer.id });
    for (const agent of [engineer, ceo]) {
      const res = await remove(agent.headers, issue.id);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/cancel/);
    }
    expect((await remove(outsider.owner.headers, issue.id)).status).toBe(404);
    expect((await remove(outsider.owner.headers, crypto.randomUUID())).status).toBe(404);
    expect(await issueRow(issue.id)).not.toBeNull();
  });
});

describe("cancelling from the board", () => {
  it("cancels a checked-out issue and releases its checkout", async () => {
    const { owner, company, engineer } = await world();
    const issue = await seedIssue(company, { status: "in_progress", assigneeAgentId: engineer.id });
    await env.DB.prepare("UPDATE issues SET checkout_run_id = ? WHERE id = ?")
      .bind(crypto.randomUUID(), issue.id)
      .run();
    const res = await patchIssue(owner.headers, issue.id, { status: "cancelled" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "cancelled", checkoutRunId: null });
    expect(await issueRow(issue.id)).toMatchObject({ status: "cancelled", checkout_run_id: null });
    expect(res.body.cancelledAt).not.toBeNull();
  });
});
