// Schedule triggers through the Worker's scheduled() handler (as the every-minute cron calls it):
// exactly one run per due minute, even when invocations repeat or overlap; nothing before the due
// minute; catch-up after downtime per the routine's catchUpPolicy.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, scheduledTick as tick } from "../../helpers";
import {
  addTrigger,
  createRoutine,
  executionIssues,
  heartbeatRunsOf,
  type RoutineTenant,
  routineRunsOf,
  routineTenant,
} from "./fixtures";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

async function scheduled(
  tenant: RoutineTenant,
  cronExpression: string,
  fields: Record<string, unknown> = {},
) {
  const routine = await createRoutine(tenant, fields);
  const { trigger } = await addTrigger(tenant, routine.id, { kind: "schedule", cronExpression });
  return { routine, trigger, due: Date.parse(trigger.nextRunAt ?? "") };
}

const nextRunAt = (triggerId: string) =>
  env.DB.prepare("SELECT next_run_at FROM routine_triggers WHERE id = ?")
    .bind(triggerId)
    .first<{ next_run_at: number | null }>()
    .then((row) => row?.next_run_at);

describe("scheduled handler", () => {
  it("fires once per due minute, and not before it", async () => {
    const tenant = await routineTenant();
    const { routine, trigger, due } = await scheduled(tenant, "* * * * *");
    await tick(due - MINUTE);
    expect(await routineRunsOf(routine.id)).toEqual([]);
    await tick(due);
    await tick(due);
    const runs = await routineRunsOf(routine.id);
    expect(runs).toEqual([
      expect.objectContaining({ status: "issue_created", source: "schedule", scheduled_for: due }),
    ]);
    expect(await nextRunAt(trigger.id)).toBe(due + MINUTE);
    const [issue] = await executionIssues(routine.id);
    expect(issue).toMatchObject({ status: "todo", assignee_agent_id: tenant.agent.id });
    expect(await heartbeatRunsOf(tenant.agent.id)).toEqual([
      expect.objectContaining({ status: "queued", invocation_source: "routine", issue_id: issue?.id }),
    ]);
    // The next minute fires again; the open issue coalesces (default policy).
    await tick(due + MINUTE);
    expect((await routineRunsOf(routine.id)).map((r) => r.status)).toEqual(["issue_created", "coalesced"]);
    const detail = await call<{ triggers: Array<{ lastFiredAt: string | null; nextRunAt: string }> }>(
      "GET",
      `/api/routines/${routine.id}`,
      { headers: tenant.board.headers },
    );
    expect(detail.body.triggers[0]?.nextRunAt).toBe(new Date(due + 2 * MINUTE).toISOString());
    expect(detail.body.triggers[0]?.lastFiredAt).not.toBeNull();
  });

  it("fires once when two invocations for the same minute overlap", async () => {
    const tenant = await routineTenant();
    const { routine, due } = await scheduled(tenant, "*/5 * * * *", { concurrencyPolicy: "always_enqueue" });
    await Promise.all([tick(due), tick(due), tick(due)]);
    expect(await routineRunsOf(routine.id)).toHaveLength(1);
    expect(await executionIssues(routine.id)).toHaveLength(1);
  });

  it("applies the concurrency policy to schedule fires", async () => {
    const tenant = await routineTenant();
    const skip = await scheduled(tenant, "* * * * *", { concurrencyPolicy: "skip_if_active" });
    const always = await scheduled(tenant, "* * * * *", { concurrencyPolicy: "always_enqueue" });
    const due = Math.max(skip.due, always.due);
    await tick(due);
    await tick(due + MINUTE);
    expect((await routineRunsOf(skip.routine.id)).map((r) => r.status)).toEqual(["issue_created", "skipped"]);
    expect(await executionIssues(skip.routine.id)).toHaveLength(1);
    expect((await routineRunsOf(always.routine.id)).map((r) => r.status)).toEqual([
      "issue_created",
      "issue_created",
    ]);
    expect(await executionIssues(always.routine.id)).toHaveLength(2);
  });

  it("skips paused routines and disabled triggers", async () => {
    const tenant = await routineTenant();
    const paused = await scheduled(tenant, "* * * * *", { status: "paused" });
    const disabled = await scheduled(tenant, "* * * * *");
    await call("PATCH", `/api/routine-triggers/${disabled.trigger.id}`, {
      headers: tenant.board.headers,
      body: { enabled: false },
    });
    await tick(Math.max(paused.due, disabled.due) + MINUTE);
    expect(await routineRunsOf(paused.routine.id)).toEqual([]);
    expect(await routineRunsOf(disabled.routine.id)).toEqual([]);
  });

  it("skip_missed: after downtime fires once and jumps to the next future tick", async () => {
    const tenant = await routineTenant();
    const { routine, trigger, due } = await scheduled(tenant, "0 * * * *");
    await tick(due + 5 * HOUR + 7 * MINUTE);
    expect(await routineRunsOf(routine.id)).toEqual([
      expect.objectContaining({ source: "schedule", scheduled_for: due }),
    ]);
    expect(await nextRunAt(trigger.id)).toBe(due + 6 * HOUR);
  });

  it("enqueue_missed_with_cap: fires each missed tick, the latest 25 at most", async () => {
    const tenant = await routineTenant();
    const fields = { catchUpPolicy: "enqueue_missed_with_cap", concurrencyPolicy: "always_enqueue" };
    const short = await scheduled(tenant, "0 * * * *", fields);
    await tick(short.due + 5 * HOUR);
    const runs = await routineRunsOf(short.routine.id);
    expect(runs.map((r) => r.scheduled_for)).toEqual([0, 1, 2, 3, 4, 5].map((h) => short.due + h * HOUR));
    expect(runs.map((r) => r.source)).toEqual([...Array(5).fill("catch_up"), "schedule"]);
    expect(await executionIssues(short.routine.id)).toHaveLength(6);
    const long = await scheduled(tenant, "0 * * * *", fields);
    await tick(long.due + 40 * HOUR);
    const capped = await routineRunsOf(long.routine.id);
    expect(capped).toHaveLength(25);
    expect(capped[0]?.scheduled_for).toBe(long.due + 16 * HOUR);
    expect(capped[24]?.scheduled_for).toBe(long.due + 40 * HOUR);
  });

  it("does not catch up a cron that fires more than once an hour", async () => {
    const tenant = await routineTenant();
    const { routine, due } = await scheduled(tenant, "*/15 * * * *", {
      catchUpPolicy: "enqueue_missed_with_cap",
    });
    await tick(due + 3 * HOUR);
    expect(await routineRunsOf(routine.id)).toHaveLength(1);
  });

  it("does not fire for the time a routine was paused once it is active again", async () => {
    const tenant = await routineTenant();
    const { routine, trigger, due } = await scheduled(tenant, "* * * * *", { status: "paused" });
    // As if it had been paused for a while: its stored tick is long past.
    await env.DB.prepare("UPDATE routine_triggers SET next_run_at = ? WHERE id = ?")
      .bind(due - 30 * MINUTE, trigger.id)
      .run();
    const resumed = await call("PATCH", `/api/routines/${routine.id}`, {
      headers: tenant.board.headers,
      body: { status: "active" },
    });
    expect(resumed.status).toBe(200);
    expect(await nextRunAt(trigger.id)).toBeGreaterThan(Date.now());
    await tick(Date.now());
    expect(await routineRunsOf(routine.id)).toEqual([]);
  });
});
