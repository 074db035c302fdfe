// Agent runs belong to their company, end to end on the real `npm start` stack with its own local
// runner (the admin's, serving every company the admin owns) and the cron it fires every minute:
//  - a STAFF user's agent does not run on anyone else's runner: its run waits for a runner, then runs
//    on the runner that user registers and starts;
//  - an agent process finds none of the runner's or the host's secrets in its environment or in
//    /proc/$PPID/environ;
//  - timeout and cancel stop the whole process group within seconds (`sleep` included);
//  - two wakes of one agent with maxConcurrentRuns 1 never overlap;
//  - an every-minute routine fires within 70 s with nobody calling the cron endpoint.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually, ownerClient } from "../support/api.ts";
import { type RunnerProcess, startRunnerProcess } from "../support/runner-process.ts";
import { type Stack, startStack } from "../support/stack.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

interface Run {
  id: string;
  status: string;
  errorReason: string | null;
  waitingForRunner: boolean;
  startedAt: string | null;
  finishedAt: string | null;
  runnerId: string | null;
}

let stack: Stack;
let admin: ApiClient;
let scratch: string;
const runners: RunnerProcess[] = [];

beforeAll(async () => {
  stack = await startStack();
  admin = await adminClient(stack.baseUrl);
  scratch = mkdtempSync(path.join(tmpdir(), "runner-isolation-"));
});

afterAll(async () => {
  for (const runner of runners) await runner.kill("SIGTERM");
  await stack?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const suffix = () => Math.random().toString(36).slice(2, 8);

async function company(client: ApiClient): Promise<string> {
  const created = await client.call<{ id: string }>("POST", "/api/companies", { name: `Iso ${suffix()}` });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

async function agent(
  client: ApiClient,
  companyId: string,
  adapterConfig: Record<string, unknown>,
  runtimeConfig: Record<string, unknown> = {},
): Promise<{ id: string; name: string }> {
  const created = await client.call<{ id: string; name: string }>(
    "POST",
    `/api/companies/${companyId}/agents`,
    {
      name: `Agent ${suffix()}`,
      role: "engineer",
      adapterType: "coder_local",
      adapterConfig,
      runtimeConfig,
    },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

async function invoke(client: ApiClient, agentId: string): Promise<Run> {
  const invoked = await client.call<Run>("POST", `/api/agents/${agentId}/heartbeat/invoke`);
  expect(invoked.status, JSON.stringify(invoked.body)).toBe(202);
  return invoked.body;
}

const runOf = async (client: ApiClient, runId: string) =>
  (await client.call<Run>("GET", `/api/heartbeat-runs/${runId}`)).body;

function until(client: ApiClient, runId: string, done: (run: Run) => boolean, what: string, ms = 30_000) {
  return eventually(
    async () => {
      const run = await runOf(client, runId);
      return done(run) ? run : undefined;
    },
    ms,
    what,
  );
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const sh = (script: string, timeoutSec = 60) => ({ command: "sh", args: ["-c", script], timeoutSec });

describe("company-owned runners", () => {
  it("a STAFF user's agent waits for that user's runner, never runs on the admin's, then runs on its own", async () => {
    const staff = await ownerClient(stack.baseUrl, admin, "staff", "STAFF");
    const companyId = await company(staff);
    const marker = path.join(scratch, `marker-${suffix()}`);
    const worker = await agent(staff, companyId, sh(`echo ran > ${marker}`));
    const run = await invoke(staff, worker.id);
    expect(run.waitingForRunner).toBe(true);
    // The admin's local runner is connected and claiming all along; it must not take this run.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect(existsSync(marker)).toBe(false);
    expect(await runOf(staff, run.id)).toMatchObject({ status: "queued", waitingForRunner: true });

    const registered = await staff.call<{ token: string; runner: { id: string } }>(
      "POST",
      `/api/companies/${companyId}/runners`,
      { name: "staff laptop" },
    );
    expect(registered.status).toBe(201);
    runners.push(startRunnerProcess(stack.baseUrl, registered.body.token));
    const finished = await until(
      staff,
      run.id,
      (r) => r.status === "succeeded",
      "the run on the staff runner",
    );
    expect(finished.runnerId).toBe(registered.body.runner.id);
    expect(readFileSync(marker, "utf8").trim()).toBe("ran");
  });

  it("an agent process finds no runner token and no host secret in its environment or its parent's", async () => {
    const companyId = await company(admin);
    const dump = path.join(scratch, `env-${suffix()}`);
    const worker = await agent(
      admin,
      companyId,
      sh(`env > ${dump}.env; cat /proc/$PPID/environ | tr '\\0' '\\n' > ${dump}.parent`),
    );
    const run = await invoke(admin, worker.id);
    await until(admin, run.id, (r) => r.status === "succeeded", "the env dump");
    const seen = `${readFileSync(`${dump}.env`, "utf8")}\n${readFileSync(`${dump}.parent`, "utf8")}`;
    const devVars = readFileSync(path.join(REPO_ROOT, ".dev.vars"), "utf8");
    const value = (name: string) => new RegExp(`^${name}=(.*)$`, "m").exec(devVars)?.[1]?.trim() ?? "";
    const runnerToken = JSON.parse(
      readFileSync(path.join(stack.stateDir, "local-runner.json"), "utf8"),
    ).token;
    for (const secret of [
      runnerToken,
      value("BRIDGE_TOKEN"),
      value("ADMIN_PASSWORD"),
      value("SECRETS_MASTER_KEY"),
    ]) {
      expect(secret.length).toBeGreaterThan(8);
      expect(seen).not.toContain(secret);
    }
    expect(seen).toContain(`PLATFORM_RUN_ID=${run.id}`);
  });

  it("a timeout and a cancel each stop the whole process group within seconds, sleep included", async () => {
    const companyId = await company(admin);
    const timedPid = path.join(scratch, `timed-${suffix()}.pid`);
    const timed = await agent(admin, companyId, sh(`sleep 300 & echo $! > ${timedPid}; wait`, 2));
    const began = Date.now();
    const run = await invoke(admin, timed.id);
    const ended = await until(
      admin,
      run.id,
      (r) => r.status !== "queued" && r.status !== "running",
      "the timeout",
    );
    expect(ended.status).toBe("timed_out");
    expect(Date.now() - began).toBeLessThan(10_000 + 5_000); // claim latency aside, well within 10 s of the limit
    await eventually(
      async () => (alive(Number(readFileSync(timedPid, "utf8"))) ? undefined : true),
      5_000,
      "sleep gone",
    );

    const cancelPid = path.join(scratch, `cancel-${suffix()}.pid`);
    const long = await agent(admin, companyId, sh(`sleep 300 & echo $! > ${cancelPid}; wait`, 600));
    const running = await invoke(admin, long.id);
    await until(admin, running.id, (r) => r.status === "running", "the run to start");
    await eventually(async () => (existsSync(cancelPid) ? true : undefined), 10_000, "the pid file");
    const asked = Date.now();
    const cancel = await admin.call<Run>("POST", `/api/heartbeat-runs/${running.id}/cancel`);
    expect(cancel.status).toBe(202);
    const cancelled = await until(admin, running.id, (r) => r.status === "cancelled", "the cancel", 10_000);
    expect(Date.now() - asked).toBeLessThan(10_000);
    expect(cancelled.errorReason).toBe("cancelled");
    await eventually(
      async () => (alive(Number(readFileSync(cancelPid, "utf8"))) ? undefined : true),
      5_000,
      "sleep gone",
    );
    expect((await admin.call("POST", `/api/heartbeat-runs/${running.id}/cancel`)).status).toBe(409);
  });

  it("two wakes of one agent with maxConcurrentRuns 1 never overlap", async () => {
    const companyId = await company(admin);
    const times = path.join(scratch, `times-${suffix()}`);
    const worker = await agent(
      admin,
      companyId,
      sh(`echo "start $(date +%s%N)" >> ${times}; sleep 2; echo "end $(date +%s%N)" >> ${times}`),
      { maxConcurrentRuns: 1 },
    );
    const issues = [];
    for (const title of ["first", "second"]) {
      const created = await admin.call<{ id: string }>("POST", `/api/companies/${companyId}/issues`, {
        title,
        status: "todo",
        assigneeAgentId: worker.id,
      });
      expect(created.status).toBe(201);
      issues.push(created.body.id);
    }
    const runs = await eventually(
      async () => {
        const listed = await admin.call<Run[]>(
          "GET",
          `/api/companies/${companyId}/heartbeat-runs?agentId=${worker.id}`,
        );
        return listed.body.length === 2 && listed.body.every((r) => r.status === "succeeded")
          ? listed.body
          : undefined;
      },
      60_000,
      "both runs to succeed",
    );
    const [a, b] = runs.map((r) => ({
      start: Date.parse(r.startedAt ?? ""),
      end: Date.parse(r.finishedAt ?? ""),
    }));
    if (!a || !b) throw new Error("two runs expected");
    const [earlier, later] = a.start <= b.start ? [a, b] : [b, a];
    expect(later.start).toBeGreaterThanOrEqual(earlier.end);
    const lines = readFileSync(times, "utf8")
      .trim()
      .split("\n")
      .map((line) => line.split(" ")[0]);
    expect(lines).toEqual(["start", "end", "start", "end"]);
  });

  it("an every-minute routine fires within 70 s with nobody calling the cron endpoint", async () => {
    const companyId = await company(admin);
    const assignee = await agent(admin, companyId, sh("true"));
    const project = await admin.call<{ id: string }>("POST", `/api/companies/${companyId}/projects`, {
      name: "Chores",
    });
    expect(project.status, JSON.stringify(project.body)).toBe(201);
    const routine = await admin.call<{ id: string }>("POST", `/api/companies/${companyId}/routines`, {
      title: "Every minute",
      assigneeAgentId: assignee.id,
      projectId: project.body.id,
    });
    expect(routine.status, JSON.stringify(routine.body)).toBe(201);
    const trigger = await admin.call("POST", `/api/routines/${routine.body.id}/triggers`, {
      kind: "schedule",
      cronExpression: "* * * * *",
    });
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
    const fired = await eventually(
      async () => {
        const runs = await admin.call<Array<{ source: string }>>(
          "GET",
          `/api/routines/${routine.body.id}/runs`,
        );
        return runs.body.find((run) => run.source === "schedule");
      },
      70_000,
      "the schedule to fire",
    );
    expect(fired.source).toBe("schedule");
  }, 90_000);
});
