// What goes out on the company's line (issue 28, docs/company-line.md "What goes out"): who gets a
// notice of each trigger, exactly once, held for quiet hours and a disconnected line, dropped when
// settled meanwhile. Asserted on the stored line_notices rows and on what the fake bridge was asked to send.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { queueApprovalNotices } from "../../../../workers/control/line";
import { failLinkRuns } from "../../../../workers/control/runs";
import { database } from "../../../../workers/db/client";
import type { ApprovalRow } from "../../../../workers/db/schema";
import { call, scheduledTick } from "../../helpers";
import { callTool, connect, textOf as mcpText } from "../../mcp/client";
import { linkedLine, personJid } from "../../mcp/whatsapp-line";
import { eventually } from "../../patience";
import { seedIssue } from "../helpers";
import {
  jid,
  lineComesBack,
  lineGoesDown,
  linkNumber,
  member,
  noticesOf,
  polls,
  requestApproval,
} from "./notices-world";

describe("approvals go out as polls to those who may decide", () => {
  it("sends the owner's verified number a poll with the three options, and nobody else", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    const unverified = await member(line.company.id, "member");
    const unverifiedPhone = await linkNumber(line.company.id, unverified, { verified: false });
    const viewer = await member(line.company.id, "viewer");
    const viewerPhone = await linkNumber(line.company.id, viewer);

    const approvalId = await requestApproval(line, "Buy the domain");

    await eventually(async () => (await noticesOf(line.company.id))[0]?.status === "sent");
    const rows = await noticesOf(line.company.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      user_id: line.owner.userId,
      kind: "approvals",
      subject_type: "approval",
      subject_id: approvalId,
      poll_options: JSON.stringify(["Approve", "Reject", "Ask for changes"]),
    });
    expect(rows[0]?.wa_message_id).toBeTruthy();
    const sent = polls(line, ownerPhone);
    expect(sent).toHaveLength(1);
    const content = sent[0]?.content as { name?: string; values?: string[]; options?: string[] };
    expect(content.values ?? content.options).toEqual(["Approve", "Reject", "Ask for changes"]);
    expect(JSON.stringify(content)).toContain(line.company.name);
    expect(JSON.stringify(content)).toContain(line.agent.name);
    expect(JSON.stringify(content)).toContain(`/companies/${line.company.id}/approvals`);
    expect(line.sent(jid(unverifiedPhone))).toEqual([]);
    expect(line.sent(jid(viewerPhone))).toEqual([]);
  });

  it("polls the owner about an agent's WhatsApp send held for the board", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    const client = await connect(line.agent.headers);
    const result = await callTool(client, "send_text", {
      sessionId: line.session.slug,
      jid: personJid(),
      text: "Cold hello",
    });
    const { approvalId } = JSON.parse(mcpText(result)) as { approvalId: string };
    await eventually(async () => (await noticesOf(line.company.id))[0]?.status === "sent");
    expect((await noticesOf(line.company.id)).map((row) => row.subject_id)).toEqual([approvalId]);
    const [poll] = polls(line, ownerPhone);
    expect(JSON.stringify(poll?.content)).toContain("send a WhatsApp message to");
  });

  it("queues one notice however often the trigger runs", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    const approvalId = await requestApproval(line, "Rent a server");
    await eventually(async () => (await noticesOf(line.company.id))[0]?.status === "sent");

    const db = database(env.DB);
    const row = (await env.DB.prepare("SELECT * FROM approvals WHERE id = ?").bind(approvalId).first()) as {
      payload: string;
      created_at: number;
      updated_at: number;
    };
    const again: ApprovalRow = {
      id: approvalId,
      companyId: line.company.id,
      type: "request_board_approval",
      status: "pending",
      payload: JSON.parse(row.payload),
      requestedByAgentId: line.agent.id,
      requestedByUserId: null,
      decisionNote: null,
      decidedByUserId: null,
      decidedAt: null,
      // The same round as stored: a resubmitted approval (updated since) is asked anew.
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
    expect(await queueApprovalNotices(db, again, "http://switchboard.test", Date.now())).toBe(0);
    await scheduledTick(Date.now());
    expect(await noticesOf(line.company.id)).toHaveLength(1);
    expect(polls(line, ownerPhone)).toHaveLength(1);
  });

  it("a notice whose first answer was lost goes out once: the retry is the message WhatsApp took", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    line.loseNextSendAnswer();
    await requestApproval(line, "Hire a designer");
    await eventually(async () => (await noticesOf(line.company.id))[0]?.error?.includes("503") === true);
    expect((await noticesOf(line.company.id))[0]?.status).toBe("queued");

    await scheduledTick(Date.now());
    await eventually(async () => (await noticesOf(line.company.id))[0]?.status === "sent");
    const sent = polls(line, ownerPhone);
    expect(sent).toHaveLength(1);
    const [row] = await noticesOf(line.company.id);
    expect(row?.wa_message_id).toBe((sent[0] as unknown as { messageId: string }).messageId);
  });

  it("holds a notice through the member's quiet hours and sends it when they end", async () => {
    const line = await linkedLine();
    // One clock reading for the window and the end expected of it: a minute boundary passing between
    // two readings would move the expected end by a minute.
    const start = Date.now();
    const minute = Math.floor((start % 86_400_000) / 60_000);
    const quiet: [number, number] = [(minute + 1380) % 1440, (minute + 60) % 1440];
    const ownerPhone = await linkNumber(line.company.id, line.owner, { quiet });
    await requestApproval(line, "Late-night purchase");

    const [held] = await noticesOf(line.company.id);
    expect(held?.status).toBe("queued");
    const end = start - (start % 60_000) + 60 * 60_000;
    expect(held?.not_before).toBe(end);
    await scheduledTick(end - 60_000);
    expect((await noticesOf(line.company.id))[0]?.status).toBe("queued");
    expect(polls(line, ownerPhone)).toEqual([]);

    await scheduledTick(end);
    expect((await noticesOf(line.company.id))[0]?.status).toBe("sent");
    expect(polls(line, ownerPhone)).toHaveLength(1);
  });

  it("queues while the line is disconnected, then sends in order and drops what was decided meanwhile", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    await lineGoesDown(line);
    const first = await requestApproval(line, "First");
    const decided = await requestApproval(line, "Second");
    const third = await requestApproval(line, "Third");
    await scheduledTick(Date.now());
    expect((await noticesOf(line.company.id)).map((row) => row.status)).toEqual([
      "queued",
      "queued",
      "queued",
    ]);
    expect(line.sent(jid(ownerPhone))).toEqual([]);

    const approved = await call("POST", `/api/approvals/${decided}/approve`, { headers: line.owner.headers });
    expect(approved.status).toBe(200);
    // The reconnect sends at once (notices-reconnect.test.ts) and the cron may race it: the claim lets
    // one of them send each notice, so wait until neither holds one.
    await lineComesBack(line);
    await scheduledTick(Date.now());
    await eventually(async () => (await noticesOf(line.company.id)).every((row) => row.status !== "queued"));

    const rows = await noticesOf(line.company.id);
    expect(rows.map((row) => [row.subject_id, row.status])).toEqual([
      [first, "sent"],
      [decided, "dropped"],
      [third, "sent"],
    ]);
    const questions = polls(line, ownerPhone).map((sent) => JSON.stringify(sent.content));
    expect(questions).toHaveLength(2);
    expect(questions[0]).toContain("First");
    expect(questions[1]).toContain("Third");
  });
});

describe("the sender", () => {
  it("holds a member's 11th notice within an hour until the oldest of the 10 is an hour old", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    const oldest = Date.now() - 30 * 60_000;
    for (let i = 0; i < 10; i++)
      await env.DB.prepare(
        `INSERT INTO line_notices (id, company_id, user_id, kind, subject_type, subject_id, phone, text, status,
           not_before, wa_message_id, created_at, sent_at)
         VALUES (?, ?, ?, 'failed_runs', 'run', ?, ?, 'earlier', 'sent', ?, ?, ?, ?)`,
      )
        .bind(
          crypto.randomUUID(),
          line.company.id,
          line.owner.userId,
          `run-${i}`,
          ownerPhone,
          oldest,
          `WA${i}`,
          oldest,
          oldest + i,
        )
        .run();
    const approvalId = await requestApproval(line, "One too many");
    await scheduledTick(Date.now());
    const held = (await noticesOf(line.company.id)).find((row) => row.subject_id === approvalId);
    expect(held?.status).toBe("queued");
    expect(held?.not_before).toBe(oldest + 3_600_000);
    expect(polls(line, ownerPhone)).toEqual([]);

    await scheduledTick(oldest + 3_600_000);
    expect((await noticesOf(line.company.id)).find((row) => row.subject_id === approvalId)?.status).toBe(
      "sent",
    );
    expect(polls(line, ownerPhone)).toHaveLength(1);
  });

  it("sends a notice once when passes race for it", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    await lineGoesDown(line);
    await requestApproval(line, "Raced");
    await lineComesBack(line);
    const at = Date.now();
    // The reconnect's own pass races the three cron passes.
    await Promise.all([scheduledTick(at), scheduledTick(at), scheduledTick(at)]);
    await eventually(async () => (await noticesOf(line.company.id))[0]?.status === "sent");
    expect((await noticesOf(line.company.id)).map((row) => row.status)).toEqual(["sent"]);
    expect(polls(line, ownerPhone)).toHaveLength(1);
  });
});

describe("questions, budget incidents and failed runs", () => {
  it("sends an agent's question to the person who handed the issue over, and only them", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    const asked = await member(line.company.id, "member");
    const askedPhone = await linkNumber(line.company.id, asked);
    const issue = await seedIssue(line.company, {
      createdByUserId: asked.userId,
      assigneeAgentId: line.agent.id,
    });

    const question = await call<{ id: string }>("POST", `/api/issues/${issue.id}/questions`, {
      body: { body: "Which region should the server be in?" },
      headers: line.agent.headers,
    });
    expect(question.status).toBe(201);
    await eventually(async () => (await noticesOf(line.company.id))[0]?.status === "sent");
    const rows = await noticesOf(line.company.id);
    expect(rows.map((row) => [row.user_id, row.kind, row.subject_id])).toEqual([
      [asked.userId, "questions", question.body.id],
    ]);
    const [sent] = line.sent(jid(askedPhone));
    expect(sent?.content.type).toBe("text");
    const text = String(sent?.content.text);
    expect(text).toContain("Which region should the server be in?");
    expect(text).toContain(issue.identifier);
    expect(text).toContain("quote");
    expect(line.sent(jid(ownerPhone))).toEqual([]);
  });

  it("tells the owners, not the members, when an agent is paused at its budget", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    const colleague = await member(line.company.id, "member");
    const colleaguePhone = await linkNumber(line.company.id, colleague);
    await env.DB.prepare("UPDATE agents SET budget_monthly_cents = 100 WHERE id = ?")
      .bind(line.agent.id)
      .run();

    const cost = await call("POST", `/api/companies/${line.company.id}/cost-events`, {
      body: {
        agentId: line.agent.id,
        provider: "anthropic",
        inputTokens: 1,
        cachedInputTokens: 0,
        outputTokens: 1,
        costCents: 150,
        occurredAt: new Date().toISOString(),
      },
      headers: line.owner.headers,
    });
    expect(cost.status, JSON.stringify(cost.body)).toBe(201);
    await eventually(async () => (await noticesOf(line.company.id))[0]?.status === "sent");
    const rows = await noticesOf(line.company.id);
    expect(rows.map((row) => [row.user_id, row.kind, row.subject_type])).toEqual([
      [line.owner.userId, "budget", "agent"],
    ]);
    const text = String(line.sent(jid(ownerPhone))[0]?.content.text);
    expect(text).toContain(line.agent.name);
    expect(text).toContain(`http://switchboard.test/agents/${line.agent.id}`);
    expect(line.sent(jid(colleaguePhone))).toEqual([]);
  });

  it("tells the owners when a project's budget passes 80 % and when it is spent (its runs stop)", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    const project = await call<{ id: string }>("POST", `/api/companies/${line.company.id}/projects`, {
      body: { name: "Moonshot" },
      headers: line.owner.headers,
    });
    const budget = await call("PUT", `/api/companies/${line.company.id}/budgets`, {
      body: { scope: "project", scopeId: project.body.id, window: "lifetime", amountCents: 100 },
      headers: line.owner.headers,
    });
    expect(budget.status).toBe(200);
    const spend = (costCents: number) =>
      call("POST", `/api/companies/${line.company.id}/cost-events`, {
        body: {
          agentId: line.agent.id,
          projectId: project.body.id,
          provider: "openai",
          costCents,
          occurredAt: new Date().toISOString(),
        },
        headers: line.owner.headers,
      });
    expect((await spend(85)).status).toBe(201);
    expect((await spend(20)).status).toBe(201);
    await eventually(async () => (await noticesOf(line.company.id)).every((row) => row.status === "sent"));
    const rows = await noticesOf(line.company.id);
    expect(rows.map((row) => [row.user_id, row.kind, row.subject_type])).toEqual([
      [line.owner.userId, "budget", "budget_incident"],
      [line.owner.userId, "budget", "budget_incident"],
    ]);
    const texts = line.sent(jid(ownerPhone)).map((sent) => String(sent.content.text));
    expect(texts.join("\n")).toContain(
      "the project Moonshot passed 80 % of its lifetime budget ($0.85 of $1.00)",
    );
    expect(texts.join("\n")).toContain("the project Moonshot reached its lifetime budget ($1.05 of $1.00)");
  });

  it("tells the issue's watchers when a run on it fails", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    const creator = await member(line.company.id, "member");
    const creatorPhone = await linkNumber(line.company.id, creator);
    const commenter = await member(line.company.id, "member");
    const commenterPhone = await linkNumber(line.company.id, commenter);
    const issue = await seedIssue(line.company, {
      createdByUserId: creator.userId,
      assigneeAgentId: line.agent.id,
    });
    const commented = await call("POST", `/api/issues/${issue.id}/comments`, {
      body: { body: "Please hurry" },
      headers: commenter.headers,
    });
    expect(commented.status).toBe(201);
    const runId = crypto.randomUUID();
    const linkId = crypto.randomUUID();
    await env.DB.prepare(
      `INSERT INTO heartbeat_runs (id, company_id, agent_id, status, invocation_source, wake_reason, issue_id,
         runner_link_id, heartbeat_at, created_at)
       VALUES (?, ?, ?, 'running', 'assignment', 'issue_assigned', ?, ?, ?, ?)`,
    )
      .bind(runId, line.company.id, line.agent.id, issue.id, linkId, Date.now(), Date.now())
      .run();

    await failLinkRuns(env, database(env.DB), linkId);
    await scheduledTick(Date.now());

    const rows = await noticesOf(line.company.id);
    expect(rows.map((row) => [row.user_id, row.status]).sort()).toEqual(
      [
        [creator.userId, "sent"],
        [commenter.userId, "sent"],
      ].sort(),
    );
    for (const digits of [creatorPhone, commenterPhone]) {
      const text = String(line.sent(jid(digits))[0]?.content.text);
      expect(text).toContain(issue.identifier);
      expect(text).toContain("failed");
    }
    expect(line.sent(jid(ownerPhone))).toEqual([]);
  });
});
