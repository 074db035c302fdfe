// Routine runs: manual and api runs under each concurrency policy (execution issue + wake), signed
// webhook fires (valid, bad, stale, replayed, rotated), and the run history.
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { dispatchRoutineRun } from "../../../../workers/control/routines/dispatch";
import { database } from "../../../../workers/db/client";
import { routines } from "../../../../workers/db/schema";
import { call } from "../../helpers";
import { activityOf } from "../helpers";
import {
  addTrigger,
  createRoutine,
  executionIssues,
  fire,
  heartbeatRunsOf,
  type RoutineTenant,
  type RunBody,
  routineRunsOf,
  routineTenant,
  runRoutine,
  signature,
} from "./fixtures";

const closeIssue = (issueId: string) =>
  env.DB.prepare("UPDATE issues SET status = 'done' WHERE id = ?").bind(issueId).run();

async function expectRun(tenant: RoutineTenant, routineId: string, status: string, body?: unknown) {
  const res = await runRoutine(tenant, routineId, body);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.body.status).toBe(status);
  return res.body;
}

describe("manual runs and the concurrency policy", () => {
  it("creates an execution issue assigned to the agent and wakes it", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant, { title: "Nightly report", priority: "high" });
    const run = await expectRun(tenant, routine.id, "issue_created", { payload: { note: "now" } });
    expect(run).toMatchObject({ source: "manual", payload: { note: "now" } });
    const [issue, ...rest] = await executionIssues(routine.id);
    expect(rest).toEqual([]);
    expect(issue).toMatchObject({
      id: run.issueId,
      status: "todo",
      assignee_agent_id: tenant.agent.id,
      project_id: tenant.projectId,
      title: "Nightly report",
    });
    expect(issue?.identifier).toMatch(new RegExp(`^${tenant.company.issuePrefix}-\\d+$`));
    const wakes = await heartbeatRunsOf(tenant.agent.id);
    expect(wakes).toEqual([
      expect.objectContaining({
        id: run.heartbeatRunId,
        status: "queued",
        issue_id: run.issueId,
        invocation_source: "routine",
        wake_reason: "routine_run",
        routine_run_id: run.id,
      }),
    ]);
    expect((await activityOf(routine.id)).map((a) => a.action)).toEqual(["routine.created", "routine.run"]);
    expect((await activityOf(issue?.id ?? "")).map((a) => a.action)).toEqual(["issue.created"]);
  });

  it("coalesce_if_active (default): a run while the issue is open joins it and wakes the agent again", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant);
    const first = await expectRun(tenant, routine.id, "issue_created");
    const second = await expectRun(tenant, routine.id, "coalesced");
    expect(second.issueId).toBe(first.issueId);
    // The agent's queued run for that issue absorbs the second wake.
    expect(second.heartbeatRunId).toBe(first.heartbeatRunId);
    const wakes = await heartbeatRunsOf(tenant.agent.id);
    expect(wakes).toHaveLength(1);
    expect(wakes[0]?.coalesced_count).toBe(1);
    expect(await executionIssues(routine.id)).toHaveLength(1);
    await closeIssue(first.issueId ?? "");
    const third = await expectRun(tenant, routine.id, "issue_created");
    expect(third.issueId).not.toBe(first.issueId);
  });

  it("coalesce_if_active under simultaneous runs: exactly one execution issue, the rest coalesce", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant);
    const row = await database(env.DB).select().from(routines).where(eq(routines.id, routine.id)).get();
    if (!row) throw new Error("routine not stored");
    // Straight into the dispatcher, all at once: every run reads "no open issue" before any commits.
    const request = {
      source: "api" as const,
      triggerId: null,
      scheduledFor: null,
      payload: null,
      actor: null,
    };
    const runs = await Promise.all(
      Array.from({ length: 6 }, () => dispatchRoutineRun(database(env.DB), row, request)),
    );
    expect(runs.map((run) => run.run.status).sort()).toEqual([
      ...Array(5).fill("coalesced"),
      "issue_created",
    ]);
    const issues = await executionIssues(routine.id);
    expect(issues).toHaveLength(1);
    expect(new Set(runs.map((run) => run.run.issueId))).toEqual(new Set([issues[0]?.id]));
  });

  it("skip_if_active: records a skipped run and wakes nobody", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant, { concurrencyPolicy: "skip_if_active" });
    await expectRun(tenant, routine.id, "issue_created");
    const skipped = await expectRun(tenant, routine.id, "skipped");
    expect(skipped).toMatchObject({ issueId: null, heartbeatRunId: null });
    expect(await heartbeatRunsOf(tenant.agent.id)).toHaveLength(1);
    expect(await executionIssues(routine.id)).toHaveLength(1);
  });

  it("always_enqueue: every run opens another issue", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant, { concurrencyPolicy: "always_enqueue" });
    const a = await expectRun(tenant, routine.id, "issue_created");
    const b = await expectRun(tenant, routine.id, "issue_created");
    expect(a.issueId).not.toBe(b.issueId);
    expect(await executionIssues(routine.id)).toHaveLength(2);
    expect(await heartbeatRunsOf(tenant.agent.id)).toHaveLength(2);
  });

  it("records the refused wake of a paused agent; archived routines cannot run", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant);
    await env.DB.prepare("UPDATE agents SET status = 'paused' WHERE id = ?").bind(tenant.agent.id).run();
    await expectRun(tenant, routine.id, "issue_created");
    expect(await heartbeatRunsOf(tenant.agent.id)).toEqual([
      expect.objectContaining({ status: "cancelled" }),
    ]);
    await call("PATCH", `/api/routines/${routine.id}`, {
      headers: tenant.board.headers,
      body: { status: "archived" },
    });
    const archived = await runRoutine(tenant, routine.id);
    expect(archived.status).toBe(409);
  });

  it("runs through an api trigger (source api); other kinds and disabled triggers are refused", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant, { concurrencyPolicy: "always_enqueue" });
    const { trigger: api } = await addTrigger(tenant, routine.id, { kind: "api" });
    const { trigger: hook } = await addTrigger(tenant, routine.id, { kind: "webhook" });
    const run = await expectRun(tenant, routine.id, "issue_created", { triggerId: api.id });
    expect(run.source).toBe("api");
    expect((await runRoutine(tenant, routine.id, { triggerId: hook.id })).status).toBe(422);
    expect((await runRoutine(tenant, routine.id, { triggerId: crypto.randomUUID() })).status).toBe(422);
    expect((await runRoutine(tenant, routine.id, { surprise: 1 })).status).toBe(400);
    await call("PATCH", `/api/routine-triggers/${api.id}`, {
      headers: tenant.board.headers,
      body: { enabled: false },
    });
    expect((await runRoutine(tenant, routine.id, { triggerId: api.id })).status).toBe(409);
  });
});

describe("webhook fire", () => {
  async function webhookRoutine(policy = "always_enqueue") {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant, { concurrencyPolicy: policy });
    const created = await addTrigger(tenant, routine.id, { kind: "webhook" });
    const publicId = created.trigger.publicId ?? "";
    return {
      tenant,
      routine,
      trigger: created.trigger,
      publicId,
      secret: created.secretMaterial?.webhookSecret ?? "",
    };
  }

  it("accepts a valid signature (no credentials) and stores the body as the payload", async () => {
    const { tenant, routine, trigger, publicId, secret } = await webhookRoutine();
    const res = await fire(publicId, secret, '{"event":"deploy","ref":"main"}');
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({
      source: "webhook",
      status: "issue_created",
      payload: { event: "deploy", ref: "main" },
    });
    expect(await executionIssues(routine.id)).toHaveLength(1);
    expect(await heartbeatRunsOf(tenant.agent.id)).toHaveLength(1);
    const ms = await fire(publicId, secret, "[1,2]", String(Date.now()));
    expect(ms.status, "a millisecond timestamp").toBe(202);
    expect(ms.body.payload).toEqual({ value: [1, 2] });
    const empty = await fire(publicId, secret, "");
    expect(empty.status).toBe(202);
    const log = await env.DB.prepare(
      "SELECT actor_type FROM activity_log WHERE entity_id = ? AND action = 'routine.run'",
    )
      .bind(routine.id)
      .all<{ actor_type: string }>();
    expect(log.results.map((r) => r.actor_type)).toEqual(["system", "system", "system"]);
    const stored = await env.DB.prepare("SELECT last_fired_at FROM routine_triggers WHERE id = ?")
      .bind(trigger.id)
      .first<{ last_fired_at: number | null }>();
    expect(stored?.last_fired_at).not.toBeNull();
  });

  it("rejects bad, missing and stale signatures with 401, and a replay with 409", async () => {
    const { routine, publicId, secret } = await webhookRoutine();
    const url = `/api/routine-triggers/public/${publicId}/fire`;
    const now = String(Math.floor(Date.now() / 1000));
    const body = '{"a":1}';
    const wrong = await fire(publicId, "0".repeat(48), body);
    expect(wrong.status).toBe(401);
    const unsigned = await call("POST", url, { rawBody: body, headers: { "X-Platform-Timestamp": now } });
    expect(unsigned.status).toBe(401);
    const noTimestamp = await call("POST", url, {
      rawBody: body,
      headers: { "X-Platform-Signature": await signature(secret, now, body) },
    });
    expect(noTimestamp.status).toBe(401);
    const stale = String(Math.floor(Date.now() / 1000) - 301);
    expect((await fire(publicId, secret, body, stale)).status).toBe(401);
    const future = String(Math.floor(Date.now() / 1000) + 301);
    expect((await fire(publicId, secret, body, future)).status).toBe(401);
    // Signed over a different body than the one sent.
    const tampered = await call("POST", url, {
      rawBody: '{"a":2}',
      headers: { "X-Platform-Timestamp": now, "X-Platform-Signature": await signature(secret, now, body) },
    });
    expect(tampered.status).toBe(401);
    expect(await routineRunsOf(routine.id)).toHaveLength(0);
    const first = await fire(publicId, secret, body, now);
    expect(first.status).toBe(202);
    const replay = await fire(publicId, secret, body, now);
    expect(replay.status).toBe(409);
    expect(replay.body.error).toBe("Webhook replay detected");
    expect(await routineRunsOf(routine.id)).toHaveLength(1);
    expect(await executionIssues(routine.id)).toHaveLength(1);
  });

  it("rotate-secret invalidates the old secret at once", async () => {
    const { tenant, trigger, publicId, secret } = await webhookRoutine();
    expect((await fire(publicId, secret)).status).toBe(202);
    const rotated = await call<{
      trigger: { id: string };
      secretMaterial: { webhookSecret: string; webhookUrl: string };
    }>("POST", `/api/routine-triggers/${trigger.id}/rotate-secret`, {
      headers: tenant.board.headers,
      body: {},
    });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secretMaterial.webhookSecret;
    expect(fresh).not.toBe(secret);
    expect(rotated.body.secretMaterial.webhookUrl).toContain(publicId);
    const old = await fire(publicId, secret, '{"n":2}');
    expect(old.status).toBe(401);
    expect((await fire(publicId, fresh, '{"n":2}')).status).toBe(202);
    expect((await activityOf(trigger.id)).map((a) => a.action)).toContain("routine.trigger_secret_rotated");
  });

  it("answers 404 for unknown or non-webhook triggers, 409 when inactive, 400 for non-JSON, 413 when large", async () => {
    const { tenant, routine, trigger, publicId, secret } = await webhookRoutine();
    expect((await fire("f".repeat(24), secret)).status).toBe(404);
    const notJson = await fire(publicId, secret, "hello");
    expect(notJson.status).toBe(400);
    const large = await fire(publicId, secret, JSON.stringify({ blob: "x".repeat(64 * 1024) }));
    expect(large.status).toBe(413);
    await call("PATCH", `/api/routine-triggers/${trigger.id}`, {
      headers: tenant.board.headers,
      body: { enabled: false },
    });
    expect((await fire(publicId, secret)).status).toBe(409);
    await call("PATCH", `/api/routine-triggers/${trigger.id}`, {
      headers: tenant.board.headers,
      body: { enabled: true },
    });
    await call("PATCH", `/api/routines/${routine.id}`, {
      headers: tenant.board.headers,
      body: { status: "paused" },
    });
    expect((await fire(publicId, secret, '{"p":1}')).status).toBe(409);
    expect(await routineRunsOf(routine.id)).toHaveLength(0);
  });
});

describe("run history", () => {
  it("returns the newest 50 by default, up to 200 with ?limit", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant);
    const base = Date.now();
    await env.DB.batch(
      Array.from({ length: 55 }, (_, i) =>
        env.DB.prepare(
          `INSERT INTO routine_runs (id, company_id, routine_id, source, status, created_at)
           VALUES (?, ?, ?, 'manual', 'skipped', ?)`,
        ).bind(crypto.randomUUID(), tenant.company.id, routine.id, base + i),
      ),
    );
    const url = `/api/routines/${routine.id}/runs`;
    const page = await call<RunBody[] & Array<{ createdAt: string }>>("GET", url, {
      headers: tenant.agent.headers,
    });
    expect(page.status).toBe(200);
    expect(page.body).toHaveLength(50);
    expect(page.body[0]?.createdAt).toBe(new Date(base + 54).toISOString());
    const all = await call<RunBody[]>("GET", `${url}?limit=200`, { headers: tenant.board.headers });
    expect(all.body).toHaveLength(55);
    expect((await call("GET", `${url}?limit=201`, { headers: tenant.board.headers })).status).toBe(400);
    expect((await call("GET", `${url}?limit=0`, { headers: tenant.board.headers })).status).toBe(400);
  });
});
