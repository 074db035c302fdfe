// Checkout (atomic claim and start) and release, through HTTP in workerd: the rules of the spec's
// checkout row, who may claim for whom, and the 409 that names the holder. The race of many agents
// on one issue is in checkout-race.test.ts.
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
} from "../helpers";

interface IssueRowSnapshot {
  status: string;
  assignee_agent_id: string | null;
  assignee_user_id: string | null;
  started_at: number | null;
  updated_at: number;
}

interface IssueBody {
  id: string;
  status: string;
  assigneeAgentId: string | null;
  assigneeUserId: string | null;
  startedAt: string | null;
  started_at: string | null;
}

interface ConflictBody {
  error: string;
  details: {
    issueId: string;
    status: string;
    assigneeAgentId: string | null;
    holder: { id: string; name: string | null } | null;
  };
}

const issueRow = (id: string) =>
  env.DB.prepare(
    "SELECT status, assignee_agent_id, assignee_user_id, started_at, updated_at FROM issues WHERE id = ?",
  )
    .bind(id)
    .first<IssueRowSnapshot>();

const checkout = <T = IssueBody>(
  issueId: string,
  headers: Record<string, string>,
  body: unknown = undefined,
) => call<T>("POST", `/api/issues/${issueId}/checkout`, { headers, body });

const claim = (issueId: string, agent: SeededAgent, expectedStatuses = ["todo"]) =>
  checkout(issueId, agent.headers, { agentId: agent.id, expectedStatuses });

const release = <T = IssueBody>(issueId: string, headers: Record<string, string>, body?: unknown) =>
  call<T>("POST", `/api/issues/${issueId}/release`, { headers, body });

let board: BoardUser;
let company: SeededCompany;
let alice: SeededAgent;
let bob: SeededAgent;

beforeAll(async () => {
  board = await boardUser();
  company = await seedCompany(board);
  alice = await seedAgent(company.id, { name: "Alice" });
  bob = await seedAgent(company.id, { name: "Bob" });
});

describe("POST /api/issues/:id/checkout", () => {
  it("claims a todo issue and starts it: status, assignee, started_at and one activity row", async () => {
    const issue = await seedIssue(company);
    const before = Date.now();
    const res = await claim(issue.id, alice);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: issue.id, status: "in_progress", assigneeAgentId: alice.id });
    expect(res.body.assigneeUserId).toBeNull();
    expect(Date.parse(res.body.startedAt ?? "")).toBeGreaterThanOrEqual(before);
    expect(res.body.started_at).toBe(res.body.startedAt);

    const row = await issueRow(issue.id);
    expect(row).toMatchObject({ status: "in_progress", assignee_agent_id: alice.id, assignee_user_id: null });
    expect(row?.started_at).toBe(Date.parse(res.body.startedAt ?? ""));
    expect(await activityOf(issue.id)).toEqual([
      { action: "issue.checked_out", actor_type: "agent", actor_id: alice.id },
    ]);
  });

  it("is idempotent for the owner: 200 again, nothing written", async () => {
    const issue = await seedIssue(company);
    expect((await claim(issue.id, alice)).status).toBe(200);
    const first = await issueRow(issue.id);
    // Even with expectedStatuses that no longer match: the owner already holds it.
    const again = await claim(issue.id, alice, ["todo"]);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ status: "in_progress", assigneeAgentId: alice.id });
    expect(await issueRow(issue.id)).toEqual(first);
    expect((await activityOf(issue.id)).length).toBe(1);
  });

  it("answers 409 naming the holder when another agent holds the issue", async () => {
    const issue = await seedIssue(company);
    expect((await claim(issue.id, alice)).status).toBe(200);
    const res = await checkout<ConflictBody>(issue.id, bob.headers, {
      agentId: bob.id,
      expectedStatuses: ["todo", "in_progress"],
    });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("Issue checkout conflict");
    expect(res.body.details).toEqual({
      issueId: issue.id,
      status: "in_progress",
      assigneeAgentId: alice.id,
      holder: { id: alice.id, name: "Alice" },
    });
    expect((await issueRow(issue.id))?.assignee_agent_id).toBe(alice.id);
  });

  it("answers 409 for a todo issue already assigned to another agent; its assignee may claim it", async () => {
    const issue = await seedIssue(company, { assigneeAgentId: bob.id });
    const res = await checkout<ConflictBody>(issue.id, alice.headers, {
      agentId: alice.id,
      expectedStatuses: ["todo"],
    });
    expect(res.status).toBe(409);
    expect(res.body.details.holder).toEqual({ id: bob.id, name: "Bob" });
    expect((await claim(issue.id, bob)).status).toBe(200);
  });

  it("answers 409 with the current status when it is not among expectedStatuses", async () => {
    const issue = await seedIssue(company, { status: "todo" });
    const res = await checkout<ConflictBody>(issue.id, alice.headers, {
      agentId: alice.id,
      expectedStatuses: ["backlog", "blocked"],
    });
    expect(res.status).toBe(409);
    expect(res.body.details).toEqual({
      issueId: issue.id,
      status: "todo",
      assigneeAgentId: null,
      holder: null,
    });
    expect(await issueRow(issue.id)).toMatchObject({ status: "todo", assignee_agent_id: null });
    expect(await activityOf(issue.id)).toEqual([]);
  });

  it("answers 422 when the status matches but checkout cannot start from it (only todo)", async () => {
    for (const status of ["backlog", "blocked", "in_review", "done"]) {
      const issue = await seedIssue(company, { status });
      const res = await claim(issue.id, alice, [status]);
      expect(res.status, status).toBe(422);
      expect(await issueRow(issue.id)).toMatchObject({ status, assignee_agent_id: null });
    }
  });

  it("takes the identifier in the path too, in any case", async () => {
    const issue = await seedIssue(company);
    const res = await checkout(issue.identifier.toLowerCase(), alice.headers, {
      agentId: alice.id,
      expectedStatuses: ["todo"],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.id).toBe(issue.id);
    expect((await release(issue.identifier, alice.headers)).status).toBe(200);
  });

  it("forbids an agent to check out as another agent (403)", async () => {
    const issue = await seedIssue(company);
    const res = await checkout(issue.id, alice.headers, { agentId: bob.id, expectedStatuses: ["todo"] });
    expect(res.status).toBe(403);
    expect((await issueRow(issue.id))?.status).toBe("todo");
  });

  it("lets a board user check out on behalf of an agent of the company", async () => {
    const issue = await seedIssue(company);
    const res = await checkout(issue.id, board.headers, { agentId: bob.id, expectedStatuses: ["todo"] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: "in_progress", assigneeAgentId: bob.id });
    expect(await activityOf(issue.id)).toEqual([
      { action: "issue.checked_out", actor_type: "user", actor_id: board.userId },
    ]);
  });

  it("refuses agents that cannot take work: pending_approval and terminated (422)", async () => {
    for (const status of ["pending_approval", "terminated"]) {
      const agent = await seedAgent(company.id, { status });
      const issue = await seedIssue(company);
      const res = await checkout(issue.id, board.headers, { agentId: agent.id, expectedStatuses: ["todo"] });
      expect(res.status, status).toBe(422);
      expect((await issueRow(issue.id))?.status).toBe("todo");
    }
  });

  it("hides other companies: their issues and agents are 404; a visible foreign agent is 422", async () => {
    const stranger = await boardUser();
    const other = await seedCompany(stranger);
    const outsider = await seedAgent(other.id);
    const issue = await seedIssue(company);
    expect((await claim(issue.id, outsider)).status).toBe(404);
    expect(
      (await checkout(issue.id, stranger.headers, { agentId: outsider.id, expectedStatuses: ["todo"] }))
        .status,
    ).toBe(404);
    // The board user cannot see the other company: its agent is unknown to them.
    expect(
      (await checkout(issue.id, board.headers, { agentId: outsider.id, expectedStatuses: ["todo"] })).status,
    ).toBe(404);
    // A member of both companies sees the agent, which still cannot take this company's issue.
    const both = await seedCompany(board);
    const foreign = await seedAgent(both.id);
    expect(
      (await checkout(issue.id, board.headers, { agentId: foreign.id, expectedStatuses: ["todo"] })).status,
    ).toBe(422);
    expect((await claim(crypto.randomUUID(), alice)).status).toBe(404);
    expect((await issueRow(issue.id))?.status).toBe("todo");
  });

  it("rejects malformed bodies with 400", async () => {
    const issue = await seedIssue(company);
    const bodies: unknown[] = [
      {},
      { agentId: alice.id },
      { agentId: alice.id, expectedStatuses: [] },
      { agentId: alice.id, expectedStatuses: ["started"] },
      { agentId: "not-a-uuid", expectedStatuses: ["todo"] },
      { agentId: alice.id, expectedStatuses: ["todo"], force: true },
    ];
    for (const body of bodies) {
      expect((await checkout(issue.id, alice.headers, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await issueRow(issue.id))?.status).toBe("todo");
  });
});

describe("POST /api/issues/:id/release", () => {
  it("the holder releases: in_progress returns to todo, the assignee is cleared, logged", async () => {
    const issue = await seedIssue(company);
    expect((await claim(issue.id, alice)).status).toBe(200);
    const res = await release(issue.id, alice.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: "todo", assigneeAgentId: null, assigneeUserId: null });
    expect(await issueRow(issue.id)).toMatchObject({ status: "todo", assignee_agent_id: null });
    expect((await activityOf(issue.id)).map((entry) => entry.action)).toEqual([
      "issue.checked_out",
      "issue.released",
    ]);
    // Open again: another agent may now claim it.
    expect((await claim(issue.id, bob)).status).toBe(200);
  });

  it("answers 409 to an agent that does not hold the issue", async () => {
    const issue = await seedIssue(company);
    expect((await claim(issue.id, alice)).status).toBe(200);
    const res = await release<{ error: string }>(issue.id, bob.headers);
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("Only the assignee can release the issue");
    expect(await issueRow(issue.id)).toMatchObject({ status: "in_progress", assignee_agent_id: alice.id });
    const unassigned = await seedIssue(company);
    expect((await release(unassigned.id, bob.headers)).status).toBe(409);
  });

  it("a board user releases anyone's issue; other statuses keep their status", async () => {
    const blocked = await seedIssue(company, { status: "blocked", assigneeAgentId: alice.id });
    const res = await release(blocked.id, board.headers, {});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: "blocked", assigneeAgentId: null });
    expect(await issueRow(blocked.id)).toMatchObject({ status: "blocked", assignee_agent_id: null });
    expect(await activityOf(blocked.id)).toEqual([
      { action: "issue.released", actor_type: "user", actor_id: board.userId },
    ]);
  });

  it("takes no body fields, tolerates a JSON content type without a body, hides other companies", async () => {
    const issue = await seedIssue(company, { status: "in_progress", assigneeAgentId: alice.id });
    expect((await release(issue.id, alice.headers, { reason: "x" })).status).toBe(400);
    expect((await release(issue.id, alice.headers, [])).status).toBe(400);
    const stranger = await boardUser();
    await seedCompany(stranger);
    expect((await release(issue.id, stranger.headers)).status).toBe(404);
    expect((await release(crypto.randomUUID(), board.headers)).status).toBe(404);
    const res = await release(issue.id, { ...alice.headers, "content-type": "application/json" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });
});
