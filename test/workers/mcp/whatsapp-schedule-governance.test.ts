// An agent's schedule_message is governed like its immediate send (issue 27): the board's policy is
// decided when it schedules (ask_first: the schedule exists only once approved; off refuses), and the
// daily cap and the pacing apply when the message actually goes out, on the day it goes out. A send
// the cap refuses then fails visibly: on the schedule's row and in the activity log.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../helpers";
import { callTool, connect, jsonOf, textOf } from "./client";
import { type Line, linkedLine, personJid } from "./whatsapp-line";

interface Scheduled {
  id: string;
  jid: string;
  content: string;
  status: string;
  lastError: string | null;
}

const later = () => new Date(Date.now() + 3_600_000).toISOString();

const setPolicy = async (line: Line, body: Record<string, unknown>) => {
  const put = await call("PUT", `/api/companies/${line.company.id}/mcp-policy`, {
    body,
    headers: line.owner.headers,
  });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
};

const schedules = async (line: Line, tab: "pending" | "history" = "pending") => {
  const listed = await call<{ data: Scheduled[] }>("GET", `/api/scheduler/${line.session.slug}?tab=${tab}`, {
    headers: line.owner.headers,
  });
  expect(listed.status).toBe(200);
  return listed.body.data;
};

const scheduled = async (line: Line, id: string) =>
  (
    await call<{ data: Scheduled }>("GET", `/api/scheduler/${line.session.slug}/${id}`, {
      headers: line.owner.headers,
    })
  ).body.data;

const sendsToday = async (line: Line) =>
  (
    await env.DB.prepare("SELECT count FROM agent_daily_sends WHERE agent_id = ? AND day = ?")
      .bind(line.agent.id, new Date().toISOString().slice(0, 10))
      .first<{ count: number }>()
  )?.count ?? 0;

const waOps = (line: Line) =>
  line.session.link.frames
    .filter((f) => f.type === "command" && f.name === "wa")
    .map((f) => f.args as { op: string; chat?: string; presence?: string; to?: string });

/** Makes the line's pending schedules due and runs the session's alarm, as if the wait had passed. */
async function fireNow(line: Line): Promise<void> {
  const stub = env.SESSION.getByName(line.session.id);
  await runInDurableObject(stub, (_, state) => {
    state.storage.sql.exec("UPDATE scheduled SET next_at = 0 WHERE status = 'PENDING'");
  });
  await runDurableObjectAlarm(stub);
}

describe("schedule_message by an agent", () => {
  it("takes nothing from today's cap and shows no typing when scheduling; the send does, paced", async () => {
    const line = await linkedLine();
    await setPolicy(line, { policies: { schedule_message: "allowed" }, dailySendCap: 5 });
    const client = await connect(line.agent.headers);
    const friend = personJid();
    const result = await callTool(client, "schedule_message", {
      sessionId: line.session.slug,
      jid: friend,
      content: "see you at nine",
      sendAt: later(),
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const { id } = jsonOf<{ data: Scheduled }>(result).data;
    expect(await sendsToday(line)).toBe(0);
    expect(waOps(line).filter((op) => op.chat === friend || op.to === friend)).toEqual([]);

    await fireNow(line);
    expect(await scheduled(line, id)).toMatchObject({ status: "SENT", lastError: null });
    expect(line.sent(friend).map((sent) => sent.content)).toEqual([
      expect.objectContaining({ text: "see you at nine" }),
    ]);
    const ops = waOps(line);
    const typing = ops.findIndex(
      (op) => op.op === "presence" && op.chat === friend && op.presence === "composing",
    );
    expect(typing).toBeGreaterThanOrEqual(0);
    expect(ops.findIndex((op) => op.op === "send" && op.to === friend)).toBeGreaterThan(typing);
    expect(await sendsToday(line)).toBe(1);
    await client.close();
  });

  it("fails visibly when the cap is used up on the day it goes out: row and activity log say why", async () => {
    const line = await linkedLine();
    await setPolicy(line, {
      policies: { schedule_message: "allowed", send_text: "allowed" },
      dailySendCap: 1,
    });
    const client = await connect(line.agent.headers);
    const friend = personJid();
    const other = personJid();
    const result = await callTool(client, "schedule_message", {
      sessionId: line.session.slug,
      jid: friend,
      content: "the report is ready",
      sendAt: later(),
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const { id } = jsonOf<{ data: Scheduled }>(result).data;
    // Scheduling took nothing: today's one send is still there for an immediate message.
    const now = await callTool(client, "send_text", { sessionId: line.session.slug, jid: other, text: "hi" });
    expect(now.isError, textOf(now)).toBeFalsy();
    expect(line.sent(other)).toHaveLength(1);
    // The line's pacing is not what this test is about: the next send may go at once.
    await env.DB.prepare("DELETE FROM line_send_slots WHERE session_id = ?").bind(line.session.id).run();

    await fireNow(line);
    const row = await scheduled(line, id);
    expect(row.status).toBe("FAILED");
    expect(row.lastError).toMatch(/^Daily send cap reached: .* 1 WhatsApp messages per UTC day/);
    expect(line.sent(friend)).toEqual([]);
    expect(await sendsToday(line)).toBe(1);
    const logged = await env.DB.prepare(
      "SELECT actor_type, actor_id, entity_type, details FROM activity_log WHERE company_id = ? AND action = ?",
    )
      .bind(line.company.id, "whatsapp.scheduled_send_failed")
      .all<{ actor_type: string; actor_id: string; entity_type: string; details: string }>();
    expect(logged.results).toHaveLength(1);
    expect(logged.results[0]).toMatchObject({
      actor_type: "agent",
      actor_id: line.agent.id,
      entity_type: "scheduled_message",
    });
    expect(JSON.parse(logged.results[0]?.details ?? "{}")).toMatchObject({
      scheduledMessageId: id,
      sessionId: line.session.slug,
      jid: friend,
      error: row.lastError,
    });
    await client.close();
  });

  it("asks first for a stranger: scheduled only once approved, never when rejected; off refuses", async () => {
    const line = await linkedLine();
    const client = await connect(line.agent.headers);
    const ask = async (content: string) => {
      const result = await callTool(client, "schedule_message", {
        sessionId: line.session.slug,
        jid: personJid(),
        content,
        sendAt: later(),
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      const answer = JSON.parse(textOf(result)) as { status: string; approvalId: string };
      expect(answer.status).toBe("pending_approval");
      return answer.approvalId;
    };
    const decide = (approvalId: string, verdict: "approve" | "reject") =>
      call("POST", `/api/approvals/${approvalId}/${verdict}`, { body: {}, headers: line.owner.headers });

    const rejected = await ask("never");
    expect(await schedules(line)).toEqual([]);
    expect((await decide(rejected, "reject")).status).toBe(200);
    expect(await schedules(line)).toEqual([]);

    const approved = await ask("once approved");
    expect(await schedules(line)).toEqual([]);
    expect((await decide(approved, "approve")).status).toBe(200);
    expect((await schedules(line)).map((row) => [row.content, row.status])).toEqual([
      ["once approved", "PENDING"],
    ]);
    // Approving schedules it: nothing is sent (nor typed) before its time.
    expect(line.sent()).toEqual([]);
    expect(await sendsToday(line)).toBe(0);

    await setPolicy(line, { policies: { schedule_message: "off" } });
    const off = await callTool(client, "schedule_message", {
      sessionId: line.session.slug,
      jid: personJid(),
      content: "no",
      sendAt: later(),
    });
    expect(off.isError).toBe(true);
    expect(textOf(off)).toMatch(/^HTTP 403: The board has turned schedule_message off/);
    expect(await schedules(line)).toHaveLength(1);
    await client.close();
  });
});
