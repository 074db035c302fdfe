// hand_off and record_document over /mcp: who gets the issue and who is woken, read back from D1;
// documents created and revised with their optimistic lock explained to the model.
import { env } from "cloudflare:workers";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  seedIssue,
  seedTwoTenants,
} from "../control/helpers";
import { callTool, connect, jsonOf, textOf } from "./client";

const issueRow = (id: string) =>
  env.DB.prepare("SELECT status, assignee_agent_id FROM issues WHERE id = ?")
    .bind(id)
    .first<{ status: string; assignee_agent_id: string | null }>();

const commentsOf = async (issueId: string) =>
  (
    await env.DB.prepare(
      "SELECT body, author_agent_id FROM issue_comments WHERE issue_id = ? ORDER BY created_at",
    )
      .bind(issueId)
      .all<{ body: string; author_agent_id: string | null }>()
  ).results;

const wakesOf = async (agentId: string, issueId: string) =>
  (
    await env.DB.prepare(
      "SELECT wake_reason, status FROM heartbeat_runs WHERE agent_id = ? AND issue_id = ? ORDER BY created_at",
    )
      .bind(agentId, issueId)
      .all<{ wake_reason: string; status: string }>()
  ).results;

describe("hand_off and record_document over /mcp", () => {
  let company: SeededCompany;
  let other: SeededCompany;
  let agent: SeededAgent;
  let foreignAgent: SeededAgent;
  let colleague: SeededAgent;
  let client: Client;

  beforeAll(async () => {
    ({ company, other, agent, foreignAgent } = await seedTwoTenants());
    colleague = await seedAgent(company.id, { name: `Grace ${crypto.randomUUID().slice(0, 6)}` });
    // A longer name that starts with the colleague's: a plain `@Grace …` would be ambiguous to read.
    await seedAgent(company.id, { name: `${colleague.name} Hopper` });
    client = await connect(agent.headers);
  });
  afterAll(() => client.close());

  it("hands an issue to a colleague named loosely: reassigned, a mention comment with the note, one wake", async () => {
    const issue = await seedIssue(company, { status: "in_progress", assigneeAgentId: agent.id });
    const result = await callTool(client, "hand_off", {
      issueId: issue.identifier,
      to: `@${colleague.name.toUpperCase()}`,
      note: "Schema is done; the API routes are yours.",
    });
    expect(jsonOf(result)).toMatchObject({
      handedOffTo: { id: colleague.id, name: colleague.name },
      reassigned: true,
    });
    expect(await issueRow(issue.id)).toEqual({ status: "in_progress", assignee_agent_id: colleague.id });
    expect(await commentsOf(issue.id)).toEqual([
      {
        body: `[@${colleague.name}](agent://${colleague.id}) Schema is done; the API routes are yours.`,
        author_agent_id: agent.id,
      },
    ]);
    expect(await wakesOf(colleague.id, issue.id)).toEqual([
      { wake_reason: "issue_assigned", status: "queued" },
    ]);
    // The colleague now holds it: its checkout is the owner's idempotent one.
    const theirs = await connect(colleague.headers);
    const checkout = await callTool(theirs, "checkout_issue", {
      issueId: issue.id,
      expectedStatuses: ["todo"],
    });
    expect(checkout.isError).toBeFalsy();
    await theirs.close();
  });

  it("reassign false only mentions: the issue stays the caller's and the colleague is woken by the mention", async () => {
    const issue = await seedIssue(company, { status: "in_progress", assigneeAgentId: agent.id });
    const result = await callTool(client, "hand_off", {
      issueId: issue.id,
      to: colleague.id,
      note: "Can you review the schema?",
      reassign: false,
    });
    expect(jsonOf(result)).toMatchObject({ reassigned: false });
    expect((await issueRow(issue.id))?.assignee_agent_id).toBe(agent.id);
    expect(await wakesOf(colleague.id, issue.id)).toEqual([
      { wake_reason: "issue_comment_mentioned", status: "queued" },
    ]);
  });

  it("a paused colleague still gets the issue; the answer says the wake waits for the board", async () => {
    const paused = await seedAgent(company.id, { status: "paused" });
    const issue = await seedIssue(company, { status: "todo", assigneeAgentId: agent.id });
    const result = jsonOf<{ message: string }>(
      await callTool(client, "hand_off", {
        issueId: issue.id,
        to: paused.name,
        note: "Yours when you are back.",
      }),
    );
    expect(result.message).toContain("paused");
    expect((await issueRow(issue.id))?.assignee_agent_id).toBe(paused.id);
    // Recorded, never run: a paused agent's wakes are cancelled (the REST rule), none queued.
    const wakes = await wakesOf(paused.id, issue.id);
    expect(wakes).toContainEqual({ wake_reason: "issue_assigned", status: "cancelled" });
    expect(wakes.every((wake) => wake.status === "cancelled")).toBe(true);
  });

  it("an unknown name, oneself, another company's agent or a bad argument is refused; nothing changes", async () => {
    const issue = await seedIssue(company, { status: "in_progress", assigneeAgentId: agent.id });
    const unknown = await callTool(client, "hand_off", { issueId: issue.id, to: "Nobody Here", note: "x" });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain("No agent named");
    expect(textOf(unknown)).toContain(colleague.name);
    const self = await callTool(client, "hand_off", { issueId: issue.id, to: agent.name, note: "x" });
    expect(textOf(self)).toMatch(/yourself/);
    const foreign = await callTool(client, "hand_off", { issueId: issue.id, to: foreignAgent.id, note: "x" });
    expect(foreign.isError).toBe(true);
    expect(textOf(foreign)).toContain("No agent");
    const noNote = await callTool(client, "hand_off", { issueId: issue.id, to: colleague.name });
    expect(noNote.isError).toBe(true);
    expect(textOf(noNote)).toMatch(/note/);
    const theirIssue = await seedIssue(other, { status: "todo" });
    const foreignIssue = await callTool(client, "hand_off", {
      issueId: theirIssue.id,
      to: colleague.name,
      note: "x",
    });
    expect(textOf(foreignIssue)).toContain("HTTP 404");
    expect(await issueRow(issue.id)).toEqual({ status: "in_progress", assignee_agent_id: agent.id });
    expect(await commentsOf(issue.id)).toEqual([]);
    expect(await commentsOf(theirIssue.id)).toEqual([]);
    expect(await wakesOf(colleague.id, issue.id)).toEqual([]);
  });

  it("record_document creates a document, then revises it from the revision it read", async () => {
    const issue = await seedIssue(company, { assigneeAgentId: agent.id });
    const created = jsonOf<{ latestRevisionId: string; latestRevisionNumber: number }>(
      await callTool(client, "record_document", {
        issueId: issue.identifier,
        key: "plan",
        title: "Plan",
        body: "# Plan\n\n1. Schema",
      }),
    );
    expect(created.latestRevisionNumber).toBe(1);
    const stale = await callTool(client, "record_document", {
      issueId: issue.id,
      key: "plan",
      body: "overwrite",
    });
    expect(stale.isError).toBe(true);
    expect(textOf(stale)).toContain("HTTP 409");
    expect(textOf(stale)).toContain(`baseRevisionId "${created.latestRevisionId}"`);
    const revised = jsonOf<{ latestRevisionNumber: number; body: string }>(
      await callTool(client, "record_document", {
        issueId: issue.id,
        key: "plan",
        body: "# Plan\n\n1. Schema\n2. Routes",
        baseRevisionId: created.latestRevisionId,
      }),
    );
    expect(revised.latestRevisionNumber).toBe(2);
    const row = await env.DB.prepare(
      "SELECT latest_body, title FROM issue_documents WHERE issue_id = ? AND key = 'plan'",
    )
      .bind(issue.id)
      .first();
    expect(row).toEqual({ latest_body: "# Plan\n\n1. Schema\n2. Routes", title: "Plan" });
    const read = jsonOf<{ body: string; latestRevisionNumber: number }>(
      await callTool(client, "get_document", { issueId: issue.identifier, key: "plan" }),
    );
    expect(read).toMatchObject({ body: "# Plan\n\n1. Schema\n2. Routes", latestRevisionNumber: 2 });
  });

  it("record_document refuses a bad key and another company's issue, storing nothing", async () => {
    const issue = await seedIssue(company);
    const badKey = await callTool(client, "record_document", {
      issueId: issue.id,
      key: "My Plan!",
      body: "x",
    });
    expect(badKey.isError).toBe(true);
    expect(textOf(badKey)).toMatch(/key/);
    const theirs = await seedIssue(other);
    const foreign = await callTool(client, "record_document", { issueId: theirs.id, key: "plan", body: "x" });
    expect(textOf(foreign)).toContain("HTTP 404");
    for (const id of [issue.id, theirs.id]) {
      const stored = await env.DB.prepare("SELECT count(*) AS n FROM issue_documents WHERE issue_id = ?")
        .bind(id)
        .first<{ n: number }>();
      expect(stored?.n).toBe(0);
    }
  });
});
