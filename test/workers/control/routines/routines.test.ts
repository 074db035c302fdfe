// Routines and their triggers through HTTP: create/update rules, agent permissions, tenancy,
// validation (400 shape, 422 rules: cron, timezone, references) and the stored next run.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { activityOf, seedAgent } from "../helpers";
import { addTrigger, createRoutine, type RoutineBody, routineTenant, type TriggerBody } from "./fixtures";

describe("routine create and read", () => {
  it("creates with defaults, lists it and shows it with its triggers", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant, { description: "Look at new issues" });
    expect(routine).toMatchObject({
      title: "Daily triage",
      assigneeAgentId: tenant.agent.id,
      projectId: tenant.projectId,
      priority: "medium",
      status: "active",
      concurrencyPolicy: "coalesce_if_active",
      catchUpPolicy: "skip_missed",
      createdByUserId: tenant.board.userId,
      triggers: [],
    });
    const list = await call<RoutineBody[]>("GET", `/api/companies/${tenant.company.id}/routines`, {
      headers: tenant.board.headers,
    });
    expect(list.status).toBe(200);
    expect(list.body.map((r) => r.id)).toEqual([routine.id]);
    await addTrigger(tenant, routine.id, { kind: "api" });
    const one = await call<RoutineBody>("GET", `/api/routines/${routine.id}`, {
      headers: tenant.agent.headers,
    });
    expect(one.status).toBe(200);
    expect(one.body.triggers.map((t) => t.kind)).toEqual(["api"]);
    expect((await activityOf(routine.id)).map((a) => a.action)).toEqual(["routine.created"]);
  });

  it("answers 400 for missing required fields, unknown fields and bad values", async () => {
    const tenant = await routineTenant();
    const url = `/api/companies/${tenant.company.id}/routines`;
    const base = { title: "T", assigneeAgentId: tenant.agent.id, projectId: tenant.projectId };
    const bodies = [
      { title: "T", projectId: tenant.projectId },
      { title: "T", assigneeAgentId: tenant.agent.id },
      { ...base, extra: true },
      { ...base, title: "x".repeat(201) },
      { ...base, title: "" },
      { ...base, concurrencyPolicy: "sometimes" },
      { ...base, status: "running" },
    ];
    for (const body of bodies) {
      const res = await call("POST", url, { headers: tenant.board.headers, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("answers 422 for a project or agent outside the company and for an agent that cannot work", async () => {
    const tenant = await routineTenant();
    const other = await routineTenant();
    const url = `/api/companies/${tenant.company.id}/routines`;
    const headers = tenant.board.headers;
    const foreignProject = await call<{ error: string }>("POST", url, {
      headers,
      body: { title: "T", assigneeAgentId: tenant.agent.id, projectId: other.projectId },
    });
    expect(foreignProject.status).toBe(422);
    expect(foreignProject.body.error).toContain("projectId");
    const foreignAgent = await call("POST", url, {
      headers,
      body: { title: "T", assigneeAgentId: other.agent.id, projectId: tenant.projectId },
    });
    expect(foreignAgent.status).toBe(422);
    const gone = await seedAgent(tenant.company.id, { status: "terminated" });
    const terminated = await call("POST", url, {
      headers,
      body: { title: "T", assigneeAgentId: gone.id, projectId: tenant.projectId },
    });
    expect(terminated.status).toBe(422);
  });

  it("lets an agent create only routines assigned to itself", async () => {
    const tenant = await routineTenant();
    const colleague = await seedAgent(tenant.company.id);
    const own = await createRoutine(tenant, {}, tenant.agent.headers);
    expect(own).toMatchObject({ createdByAgentId: tenant.agent.id, createdByUserId: null });
    const res = await call("POST", `/api/companies/${tenant.company.id}/routines`, {
      headers: tenant.agent.headers,
      body: { title: "Not mine", assigneeAgentId: colleague.id, projectId: tenant.projectId },
    });
    expect(res.status).toBe(403);
    const count = await env.DB.prepare("SELECT count(*) AS n FROM routines WHERE company_id = ?")
      .bind(tenant.company.id)
      .first<{ n: number }>();
    expect(count?.n).toBe(1);
  });

  it("answers 404 for another company's routines, triggers and list", async () => {
    const tenant = await routineTenant();
    const other = await routineTenant();
    const routine = await createRoutine(tenant);
    const { trigger } = await addTrigger(tenant, routine.id, { kind: "api" });
    const checks: Array<[string, string, Record<string, string>, unknown?]> = [
      ["GET", `/api/routines/${routine.id}`, other.board.headers],
      ["GET", `/api/routines/${routine.id}`, other.agent.headers],
      ["PATCH", `/api/routines/${routine.id}`, other.board.headers, { title: "x" }],
      ["GET", `/api/companies/${tenant.company.id}/routines`, other.agent.headers],
      ["POST", `/api/routines/${routine.id}/triggers`, other.board.headers, { kind: "api" }],
      ["PATCH", `/api/routine-triggers/${trigger.id}`, other.board.headers, { enabled: false }],
      ["DELETE", `/api/routine-triggers/${trigger.id}`, other.board.headers],
      ["POST", `/api/routines/${routine.id}/run`, other.board.headers, {}],
      ["GET", `/api/routines/${routine.id}/runs`, other.agent.headers],
    ];
    for (const [method, path, headers, body] of checks) {
      const res = await call(method, path, { headers, ...(body === undefined ? {} : { body }) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
  });
});

describe("routine update", () => {
  it("lets an agent update its own routine but not reassign it, nor touch another's", async () => {
    const tenant = await routineTenant();
    const colleague = await seedAgent(tenant.company.id);
    const own = await createRoutine(tenant);
    const theirs = await createRoutine(tenant, { assigneeAgentId: colleague.id });
    const renamed = await call<RoutineBody & { title: string }>("PATCH", `/api/routines/${own.id}`, {
      headers: tenant.agent.headers,
      body: { title: "Renamed", concurrencyPolicy: "skip_if_active" },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ title: "Renamed", concurrencyPolicy: "skip_if_active" });
    const reassign = await call("PATCH", `/api/routines/${own.id}`, {
      headers: tenant.agent.headers,
      body: { assigneeAgentId: colleague.id },
    });
    expect(reassign.status).toBe(403);
    const foreign = await call("PATCH", `/api/routines/${theirs.id}`, {
      headers: tenant.agent.headers,
      body: { title: "Mine now" },
    });
    expect(foreign.status).toBe(403);
    const trigger = await call("POST", `/api/routines/${theirs.id}/triggers`, {
      headers: tenant.agent.headers,
      body: { kind: "api" },
    });
    expect(trigger.status).toBe(403);
    const board = await call<RoutineBody>("PATCH", `/api/routines/${own.id}`, {
      headers: tenant.board.headers,
      body: { assigneeAgentId: colleague.id },
    });
    expect(board.status).toBe(200);
    expect(board.body.assigneeAgentId).toBe(colleague.id);
    expect((await activityOf(own.id)).map((a) => a.action)).toEqual([
      "routine.created",
      "routine.updated",
      "routine.updated",
    ]);
  });

  it("answers 400 for unknown fields and 422 for a foreign project", async () => {
    const tenant = await routineTenant();
    const other = await routineTenant();
    const routine = await createRoutine(tenant);
    const unknown = await call("PATCH", `/api/routines/${routine.id}`, {
      headers: tenant.board.headers,
      body: { cron: "* * * * *" },
    });
    expect(unknown.status).toBe(400);
    const foreign = await call("PATCH", `/api/routines/${routine.id}`, {
      headers: tenant.board.headers,
      body: { projectId: other.projectId },
    });
    expect(foreign.status).toBe(422);
  });
});

/** Wall-clock parts of a time in a zone, for checking schedules independently of croner. */
function partsIn(ms: number, timeZone: string) {
  const parts = new Intl.DateTimeFormat("en-GB", {
    timeZone,
    weekday: "short",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).formatToParts(new Date(ms));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return { weekday: get("weekday"), hour: Number(get("hour")), minute: Number(get("minute")) };
}

describe("schedule triggers", () => {
  it("stores the next due minute: 0 9 * * 1-5 in Europe/Berlin", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant);
    const before = Date.now();
    const { trigger, secretMaterial } = await addTrigger(tenant, routine.id, {
      kind: "schedule",
      cronExpression: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
    });
    expect(secretMaterial).toBeNull();
    expect(trigger).toMatchObject({ kind: "schedule", timezone: "Europe/Berlin", enabled: true });
    const next = Date.parse(trigger.nextRunAt ?? "");
    expect(next).toBeGreaterThan(before);
    const matches = (ms: number) => {
      const p = partsIn(ms, "Europe/Berlin");
      return p.hour === 9 && p.minute === 0 && !["Sat", "Sun"].includes(p.weekday);
    };
    expect(matches(next)).toBe(true);
    // No earlier minute after `before` matches: it is the NEXT tick (checked minute by minute).
    for (let m = Math.ceil(before / 60_000) * 60_000; m < next; m += 60_000) expect(matches(m)).toBe(false);
    // 09:00 in Berlin is 08:00Z in winter and 07:00Z in summer.
    expect(trigger.nextRunAt).toMatch(/T0[78]:00:00\.000Z$/);
  });

  it("defaults to UTC", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant);
    const { trigger } = await addTrigger(tenant, routine.id, {
      kind: "schedule",
      cronExpression: "30 6 * * *",
    });
    expect(trigger.timezone).toBe("UTC");
    expect(trigger.nextRunAt).toMatch(/T06:30:00\.000Z$/);
    expect(Date.parse(trigger.nextRunAt ?? "") - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
  });

  it("answers 422 with the reason for a bad cron or time zone, 400 for a malformed body", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant);
    const url = `/api/routines/${routine.id}/triggers`;
    const headers = tenant.board.headers;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ kind: "schedule", cronExpression: "61 * * * *" }, "minute"],
      [{ kind: "schedule", cronExpression: "* * * *" }, "5 fields"],
      [{ kind: "schedule", cronExpression: "0 0 * * * *" }, "5 fields"],
      [{ kind: "schedule", cronExpression: "@daily" }, "5 fields"],
      [{ kind: "schedule", cronExpression: "0 0 31 2 *" }, "never"],
      [{ kind: "schedule", cronExpression: "0 9 * * *", timezone: "Mars/Base" }, "timezone"],
    ];
    for (const [body, reason] of cases) {
      const res = await call<{ error: string }>("POST", url, { headers, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error).toContain(reason);
    }
    for (const body of [
      { kind: "cron", cronExpression: "* * * * *" },
      { kind: "schedule" },
      { kind: "api", cronExpression: "* * * * *" },
      { kind: "webhook", replayWindowSec: 5 },
    ]) {
      const res = await call("POST", url, { headers, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const stored = await env.DB.prepare("SELECT count(*) AS n FROM routine_triggers WHERE routine_id = ?")
      .bind(routine.id)
      .first<{ n: number }>();
    expect(stored?.n).toBe(0);
  });

  it("updates: disable, new cron recomputes nextRunAt, fields of another kind are 422; delete", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant);
    const { trigger } = await addTrigger(tenant, routine.id, {
      kind: "schedule",
      cronExpression: "0 9 * * *",
    });
    const url = `/api/routine-triggers/${trigger.id}`;
    const headers = tenant.board.headers;
    const disabled = await call<TriggerBody>("PATCH", url, { headers, body: { enabled: false } });
    expect(disabled.status).toBe(200);
    expect(disabled.body.enabled).toBe(false);
    const moved = await call<TriggerBody>("PATCH", url, { headers, body: { cronExpression: "15 3 * * *" } });
    expect(moved.status).toBe(200);
    expect(moved.body.cronExpression).toBe("15 3 * * *");
    expect(moved.body.nextRunAt).toMatch(/T03:15:00\.000Z$/);
    const badCron = await call("PATCH", url, { headers, body: { cronExpression: "0 25 * * *" } });
    expect(badCron.status).toBe(422);
    const wrongKind = await call("PATCH", url, { headers, body: { replayWindowSec: 600 } });
    expect(wrongKind.status).toBe(422);
    const { trigger: api } = await addTrigger(tenant, routine.id, { kind: "api" });
    const cronOnApi = await call("PATCH", `/api/routine-triggers/${api.id}`, {
      headers,
      body: { cronExpression: "* * * * *" },
    });
    expect(cronOnApi.status).toBe(422);
    const rotateApi = await call("POST", `/api/routine-triggers/${api.id}/rotate-secret`, {
      headers,
      body: {},
    });
    expect(rotateApi.status).toBe(422);
    const deleted = await call("DELETE", url, { headers });
    expect(deleted.status).toBe(204);
    const after = await call<RoutineBody>("GET", `/api/routines/${routine.id}`, { headers });
    expect(after.body.triggers.map((t) => t.id)).toEqual([api.id]);
    expect((await activityOf(trigger.id)).map((a) => a.action)).toEqual([
      "routine.trigger_created",
      "routine.trigger_updated",
      "routine.trigger_updated",
      "routine.trigger_deleted",
    ]);
  });
});

describe("webhook triggers", () => {
  it("shows the secret once and stores only its ciphertext", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant);
    const { trigger, secretMaterial } = await addTrigger(tenant, routine.id, { kind: "webhook" });
    expect(trigger.publicId).toMatch(/^[0-9a-f]{24}$/);
    expect(secretMaterial?.webhookSecret).toMatch(/^[0-9a-f]{48}$/);
    expect(secretMaterial?.webhookUrl).toBe(
      `http://switchboard.test/api/routine-triggers/public/${trigger.publicId}/fire`,
    );
    expect(trigger).toMatchObject({ replayWindowSec: 300 });
    const secret = secretMaterial?.webhookSecret ?? "";
    const detail = await call("GET", `/api/routines/${routine.id}`, { headers: tenant.board.headers });
    expect(JSON.stringify(detail.body)).not.toContain(secret);
    const row = await env.DB.prepare("SELECT secret_ciphertext FROM routine_triggers WHERE id = ?")
      .bind(trigger.id)
      .first<{ secret_ciphertext: string }>();
    expect(row?.secret_ciphertext).toMatch(/^v1\./);
    expect(row?.secret_ciphertext).not.toContain(secret);
    const activity = await env.DB.prepare("SELECT details FROM activity_log WHERE entity_id = ?")
      .bind(trigger.id)
      .all<{ details: string }>();
    expect(JSON.stringify(activity.results)).not.toContain(secret);
  });
});
