// Heartbeat timers, fired by the Worker's every-minute cron: an agent with actionable work is woken
// once per interval, an idle one never; a paused or archived company's timers do not fire at all, and
// a routine due there records its wake cancelled with the reason, so nothing starts until it resumes.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, scheduledTick } from "../../helpers";
import { type BoardUser, boardUser, type SeededCompany, seedAgent, seedCompany, seedIssue } from "../helpers";
import { seedProject } from "../routines/fixtures";

type Json = Record<string, unknown>;

const MINUTE = 60_000;

/** The agent's runs (those `source` invoked, when given), oldest first. */
const runsOf = async (agentId: string, source?: "timer") =>
  (
    await env.DB.prepare(
      "SELECT status, error_reason FROM heartbeat_runs WHERE agent_id = ? AND invocation_source LIKE ? ORDER BY created_at",
    )
      .bind(agentId, source ?? "%")
      .all<Json>()
  ).results;
const timerRuns = (agentId: string) => runsOf(agentId, "timer");

const lastHeartbeatAt = async (agentId: string) =>
  (await env.DB.prepare("SELECT last_heartbeat_at FROM agents WHERE id = ?").bind(agentId).first<Json>())
    ?.last_heartbeat_at;

async function setCompanyStatus(board: BoardUser, company: SeededCompany, status: "active" | "paused") {
  const res = await call("PATCH", `/api/companies/${company.id}`, {
    headers: board.headers,
    body: { status },
  });
  expect(res.status).toBe(200);
}

/** An every-minute routine assigned to `agentId`; answers the minute its trigger is first due. */
async function everyMinuteRoutine(
  board: BoardUser,
  company: SeededCompany,
  agentId: string,
): Promise<number> {
  const routine = await call<Json>("POST", `/api/companies/${company.id}/routines`, {
    headers: board.headers,
    body: {
      title: "Every minute",
      assigneeAgentId: agentId,
      projectId: await seedProject(board, company.id),
    },
  });
  expect(routine.status).toBe(201);
  const trigger = await call<{ trigger: { nextRunAt: string } }>(
    "POST",
    `/api/routines/${routine.body.id}/triggers`,
    {
      headers: board.headers,
      body: { kind: "schedule", cronExpression: "* * * * *" },
    },
  );
  expect(trigger.status).toBe(201);
  return Date.parse(trigger.body.trigger.nextRunAt);
}

describe("heartbeat timers", () => {
  it("wake an agent with actionable work once per interval, and never an idle agent with nothing to do", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const busy = await seedAgent(company.id, { name: "Busy" });
    const idle = await seedAgent(company.id, { name: "Idle" });
    const timer = JSON.stringify({ heartbeat: { enabled: true, intervalSec: 300, wakeOnDemand: true } });
    await env.DB.prepare("UPDATE agents SET runtime_config = ? WHERE id IN (?, ?)")
      .bind(timer, busy.id, idle.id)
      .run();
    await seedIssue(company, { status: "todo", assigneeAgentId: busy.id });
    const now = Date.now();
    await Promise.all([scheduledTick(now), scheduledTick(now)]);
    expect(await timerRuns(busy.id)).toEqual([{ status: "queued", error_reason: null }]);
    expect(await timerRuns(idle.id)).toEqual([]);
    await env.DB.prepare("UPDATE heartbeat_runs SET status = 'succeeded' WHERE agent_id = ?")
      .bind(busy.id)
      .run();
    await scheduledTick(now + 60_000); // inside the interval: nothing
    expect(await timerRuns(busy.id)).toHaveLength(1);
    await scheduledTick(now + 301_000);
    expect(await timerRuns(busy.id)).toHaveLength(2);
  });

  it("start nothing in a paused or archived company, and fire again once it is active", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const timed = await seedAgent(company.id, { name: "Timed" });
    const routed = await seedAgent(company.id, { name: "Routed" });
    await env.DB.prepare("UPDATE agents SET runtime_config = ? WHERE id = ?")
      .bind(JSON.stringify({ heartbeat: { enabled: true, intervalSec: 60 } }), timed.id)
      .run();
    await seedIssue(company, { status: "todo", assigneeAgentId: timed.id });
    const due = await everyMinuteRoutine(board, company, routed.id);
    await setCompanyStatus(board, company, "paused");

    await scheduledTick(due);
    // The timer does not even fire (no cancelled row a minute, its tick not used up) ...
    expect(await timerRuns(timed.id)).toEqual([]);
    expect(await lastHeartbeatAt(timed.id)).toBeNull();
    // ... and the routine's wake is recorded, cancelled with the reason: nothing was queued.
    expect(await runsOf(routed.id)).toEqual([{ status: "cancelled", error_reason: "company_paused" }]);

    await setCompanyStatus(board, company, "active");
    await scheduledTick(due + MINUTE);
    expect(await timerRuns(timed.id)).toEqual([{ status: "queued", error_reason: null }]);
    expect((await runsOf(routed.id)).at(-1)).toEqual({ status: "queued", error_reason: null });

    const archived = await call("POST", `/api/companies/${company.id}/archive`, { headers: board.headers });
    expect(archived.status).toBe(200);
    expect(await timerRuns(timed.id)).toEqual([{ status: "cancelled", error_reason: "company_archived" }]);
    const before = await lastHeartbeatAt(timed.id);
    await scheduledTick(due + 3 * MINUTE);
    expect(await timerRuns(timed.id)).toEqual([{ status: "cancelled", error_reason: "company_archived" }]);
    expect(await lastHeartbeatAt(timed.id)).toBe(before);
    expect((await runsOf(routed.id)).at(-1)).toEqual({
      status: "cancelled",
      error_reason: "company_archived",
    });
  });
});
