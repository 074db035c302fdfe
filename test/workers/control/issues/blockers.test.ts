// blockedByIssueIds: same-company links without cycles, "blocked" needs a reason, checkout waits for
// the blockers, and resolving the last blocker wakes the dependent's assignee.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { seedIssue } from "../helpers";
import {
  createIssue,
  type ErrorBody,
  type Issue,
  issueRow,
  linkBlocker,
  patchIssue,
  rowsOf,
  wakesOf,
  world,
} from "./fixtures";

type WithBlockers = Issue & { blockedByIssueIds: string[] };

const blockersOf = async (issueId: string) =>
  (
    await rowsOf<{ blocker_issue_id: string }>(
      "SELECT blocker_issue_id FROM issue_blockers WHERE issue_id = ? ORDER BY blocker_issue_id",
      issueId,
    )
  ).map((row) => row.blocker_issue_id);

async function linkPendingApproval(companyId: string, issueId: string) {
  const id = crypto.randomUUID();
  const now = Date.now();
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO approvals (id, company_id, type, status, payload, created_at, updated_at)
       VALUES (?, ?, 'hire_agent', 'pending', '{}', ?, ?)`,
    ).bind(id, companyId, now, now),
    env.DB.prepare(
      "INSERT INTO issue_approvals (issue_id, approval_id, company_id, created_at) VALUES (?, ?, ?, ?)",
    ).bind(issueId, id, companyId, now),
  ]);
}

describe("blockedByIssueIds", () => {
  it("links issues of the same company on create and PATCH, shown on the issue", async () => {
    const { owner, company } = await world();
    const [a, b] = [await seedIssue(company), await seedIssue(company)];
    const created = await createIssue<WithBlockers>(owner.headers, company, {
      title: "Waits",
      blockedByIssueIds: [a.id, a.id, b.id],
    });
    expect(created.status).toBe(201);
    expect(created.body.blockedByIssueIds.sort()).toEqual([a.id, b.id].sort());
    expect(await blockersOf(created.body.id)).toEqual([a.id, b.id].sort());
    const detail = await call<WithBlockers>("GET", `/api/issues/${created.body.id}`, {
      headers: owner.headers,
    });
    expect(detail.body.blockedByIssueIds.sort()).toEqual([a.id, b.id].sort());
    const replaced = await patchIssue<WithBlockers>(owner.headers, created.body.id, {
      blockedByIssueIds: [b.id],
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.blockedByIssueIds).toEqual([b.id]);
    expect(await blockersOf(created.body.id)).toEqual([b.id]);
    const cleared = await patchIssue<WithBlockers>(owner.headers, created.body.id, { blockedByIssueIds: [] });
    expect(cleared.body.blockedByIssueIds).toEqual([]);
    expect(await blockersOf(created.body.id)).toEqual([]);
  });

  it("refuses unknown and other companies' ids, itself, cycles and wrong types, writing nothing", async () => {
    const { owner, company } = await world();
    const theirs = await world();
    const foreign = await seedIssue(theirs.company);
    const [a, b, c] = [await seedIssue(company), await seedIssue(company), await seedIssue(company)];
    const before = await rowsOf("SELECT id FROM issues WHERE company_id = ?", company.id);
    for (const ids of [[foreign.id], [crypto.randomUUID()], [a.id, foreign.id]]) {
      const res = await createIssue<ErrorBody>(owner.headers, company, {
        title: "x",
        blockedByIssueIds: ids,
      });
      expect(res.status).toBe(422);
      expect(res.body.details).toMatchObject({ field: "blockedByIssueIds" });
      expect((await patchIssue(owner.headers, a.id, { blockedByIssueIds: ids })).status).toBe(422);
    }
    for (const body of [{ blockedByIssueIds: a.id }, { blockedByIssueIds: [1] }, { blockedByIssueIds: [""] }])
      expect((await patchIssue(owner.headers, a.id, body)).status).toBe(400);
    expect(await rowsOf("SELECT id FROM issues WHERE company_id = ?", company.id)).toHaveLength(
      before.length,
    );
    const self = await patchIssue<ErrorBody>(owner.headers, a.id, { blockedByIssueIds: [a.id] });
    expect(self.status).toBe(422);
    expect(self.body.error).toMatch(/itself/);
    // a waits for b, b waits for c: c may not wait for a (nor b for a).
    expect((await patchIssue(owner.headers, a.id, { blockedByIssueIds: [b.id] })).status).toBe(200);
    expect((await patchIssue(owner.headers, b.id, { blockedByIssueIds: [c.id] })).status).toBe(200);
    for (const issue of [c, b]) {
      const loop = await patchIssue<ErrorBody>(owner.headers, issue.id, { blockedByIssueIds: [a.id] });
      expect(loop.status).toBe(422);
      expect(loop.body.error).toMatch(/block itself/);
    }
    expect(await blockersOf(c.id)).toEqual([]);
    // Someone else's issue cannot be given blockers at all: it is not found.
    expect((await patchIssue(owner.headers, foreign.id, { blockedByIssueIds: [a.id] })).status).toBe(404);
    expect(await blockersOf(foreign.id)).toEqual([]);
  });

  it("enters blocked only with a comment, an unresolved blocker or a pending linked approval", async () => {
    const { owner, company, engineer } = await world();
    const working = () => seedIssue(company, { status: "in_progress", assigneeAgentId: engineer.id });
    const bare = await working();
    const refused = await patchIssue<ErrorBody>(engineer.headers, bare.id, { status: "blocked" });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatch(/Entering blocked requires/);
    expect((await issueRow(bare.id))?.status).toBe("in_progress");
    const done = await seedIssue(company, { status: "done" });
    const onlyResolved = await patchIssue(engineer.headers, bare.id, {
      status: "blocked",
      blockedByIssueIds: [done.id],
    });
    expect(onlyResolved.status).toBe(422);
    expect(await blockersOf(bare.id)).toEqual([]);
    const open = await seedIssue(company);
    const ok = await patchIssue<WithBlockers>(engineer.headers, bare.id, {
      status: "blocked",
      blockedByIssueIds: [open.id],
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: "blocked", blockedByIssueIds: [open.id] });
    const waiting = await working();
    await linkPendingApproval(company.id, waiting.id);
    expect((await patchIssue(owner.headers, waiting.id, { status: "blocked" })).status).toBe(200);
  });

  it("enters blocked with a comment alone (spec rule 6), and the assignee or the board moves it back", async () => {
    const { owner, company, engineer } = await world();
    const issue = await seedIssue(company, { status: "in_progress", assigneeAgentId: engineer.id });
    const blocked = await patchIssue<WithBlockers & { comment?: { body: string } }>(
      engineer.headers,
      issue.id,
      {
        status: "blocked",
        comment: "Waiting for the staging credentials from ops",
      },
    );
    expect(blocked.status).toBe(200);
    expect(blocked.body).toMatchObject({ status: "blocked", blockedByIssueIds: [] });
    expect(blocked.body.comment?.body).toBe("Waiting for the staging credentials from ops");
    const comments = await rowsOf<{ body: string }>(
      "SELECT body FROM issue_comments WHERE issue_id = ?",
      issue.id,
    );
    expect(comments.map((row) => row.body)).toEqual(["Waiting for the staging credentials from ops"]);
    // The assignee picks it up again once the credentials arrive…
    const resumed = await patchIssue(engineer.headers, issue.id, {
      status: "in_progress",
      comment: "Got them",
    });
    expect(resumed.status).toBe(200);
    expect((await issueRow(issue.id))?.status).toBe("in_progress");
    // …and a board user can send it back to the queue.
    expect(
      (await patchIssue(engineer.headers, issue.id, { status: "blocked", comment: "Again" })).status,
    ).toBe(200);
    expect((await patchIssue(owner.headers, issue.id, { status: "todo" })).status).toBe(200);
    expect((await issueRow(issue.id))?.status).toBe("todo");
  });

  it("checkout of an issue with unresolved blockers is 422 naming them", async () => {
    const { company, engineer } = await world();
    const blocker = await seedIssue(company);
    const issue = await seedIssue(company);
    await linkBlocker(company.id, issue.id, blocker.id);
    const res = await call<ErrorBody>("POST", `/api/issues/${issue.id}/checkout`, {
      headers: engineer.headers,
      body: { agentId: engineer.id, expectedStatuses: ["todo"] },
    });
    expect(res.status).toBe(422);
    expect(res.body.details).toEqual({ unresolvedBlockerIssueIds: [blocker.id] });
    expect((await issueRow(issue.id))?.status).toBe("todo");
  });

  it("wakes the dependent's assignee when its last unresolved blocker is done or cancelled", async () => {
    const { owner, company, engineer, peer } = await world();
    const first = await seedIssue(company, { status: "in_progress", assigneeAgentId: peer.id });
    const second = await seedIssue(company, { status: "in_progress", assigneeAgentId: peer.id });
    const dependent = await seedIssue(company, { status: "in_progress", assigneeAgentId: engineer.id });
    const unassigned = await seedIssue(company);
    expect(
      (
        await patchIssue(engineer.headers, dependent.id, {
          status: "blocked",
          blockedByIssueIds: [first.id, second.id],
        })
      ).status,
    ).toBe(200);
    expect((await patchIssue(owner.headers, unassigned.id, { blockedByIssueIds: [second.id] })).status).toBe(
      200,
    );
    expect((await patchIssue(peer.headers, first.id, { status: "done" })).status).toBe(200);
    expect(await wakesOf(dependent.id)).toEqual([]);
    expect((await patchIssue(owner.headers, second.id, { status: "cancelled" })).status).toBe(200);
    expect(await wakesOf(dependent.id)).toEqual([
      expect.objectContaining({
        agent_id: engineer.id,
        status: "queued",
        wake_reason: "issue_blockers_resolved",
        invocation_source: "dependency",
      }),
    ]);
    expect(await wakesOf(unassigned.id)).toEqual([]);
    // The links stay as the record of what the issue waited for; the status is the assignee's call.
    expect((await issueRow(dependent.id))?.status).toBe("blocked");
    expect(await blockersOf(dependent.id)).toEqual([first.id, second.id].sort());
  });
});
