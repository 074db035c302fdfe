// Agent runs belong to their company, end to end on the real `npm start` stack with its own local
// runner (the admin's, serving every company the admin owns) and the cron it fires every minute:
//  - a STAFF user's agent does not run on anyone else's runner: its run waits for a runner, then runs
//    on the runner that user registers and starts;
//  - two owners' runners, with wakes interleaved: each run executes on its own company's runner
//    process, and no agent process ever sees the other company's secret;
//  - an agent process finds none of the runner's or the host's secrets in its environment, its
//    parent's (the runner) or its grandparent's (the launcher npm start gave a clean environment);
//  - timeout and cancel stop the whole process group within seconds (`sleep` included);
//  - two wakes of one agent with maxConcurrentRuns 1 never overlap;
//  - an every-minute routine fires within 70 s with nobody calling the cron endpoint.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEPT_ENV } from "../../bridge/src/runner/config.ts";
import { agentCli } from "../support/agent-clis.ts";
import { type ApiClient, adminClient, eventually, ownerClient } from "../support/api.ts";
import {
  createAgent as agent,
  alive,
  createCompany as company,
  everyMinuteRoutine,
  invoke,
  parentOf,
  type Run,
  runOf,
  scheduledRoutineRun,
  sh,
  suffix,
  untilRun as until,
} from "../support/control-runs.ts";
import { type RunnerProcess, startRunnerProcess } from "../support/runner-process.ts";
import { type Stack, startStack } from "../support/stack.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

let stack: Stack;
let admin: ApiClient;
let scratch: string;
let everyMinute: { routineId: string; createdAt: number };
const runners: RunnerProcess[] = [];

beforeAll(async () => {
  stack = await startStack();
  admin = await adminClient(stack.baseUrl);
  scratch = mkdtempSync(path.join(tmpdir(), "runner-isolation-"));
  const companyId = await company(admin);
  const assignee = await agent(admin, companyId, sh("true"));
  const createdAt = Date.now();
  everyMinute = { routineId: await everyMinuteRoutine(admin, companyId, assignee.id), createdAt };
});

afterAll(async () => {
  for (const runner of runners) await runner.kill("SIGTERM");
  await stack?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** The variable names in an environment dump (one NAME=value a line). */
const namesIn = (dump: string): string[] =>
  dump
    .split("\n")
    .filter((line) => line.includes("="))
    .map((line) => line.slice(0, line.indexOf("=")));

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

  it("two owners' runners, interleaved wakes: each run executes on its own company's runner, no process sees the other's secret", async () => {
    const claude = agentCli("claude");
    const dumps = path.join(scratch, `tenancy-${suffix()}`);
    mkdirSync(dumps);
    const tenants = [];
    for (const label of ["a", "b"]) {
      const owner = await ownerClient(stack.baseUrl, admin, `owner-${label}`, "STAFF");
      const companyId = await company(owner);
      const secretValue = `secret-of-${label}-${suffix()}${suffix()}`;
      const secret = await owner.call<{ id: string }>("POST", `/api/companies/${companyId}/secrets`, {
        name: "API token",
        value: secretValue,
      });
      expect(secret.status, JSON.stringify(secret.body)).toBe(201);
      const worker = await agent(owner, companyId, {
        ...sh(
          `d=${dumps}/$PLATFORM_RUN_ID; mkdir $d; echo $PPID > $d/ppid; env > $d/env; ` +
            `tr '\\0' '\\n' < /proc/$PPID/environ > $d/parent; sleep 0.5`,
        ),
        env: { TOKEN: { type: "secret_ref", secretId: secret.body.id } },
      });
      const registered = await owner.call<{ token: string; runner: { id: string } }>(
        "POST",
        `/api/companies/${companyId}/runners`,
        { name: `runner ${label}` },
      );
      expect(registered.status).toBe(201);
      tenants.push({
        owner,
        companyId,
        secretValue,
        worker,
        registered: registered.body,
        runIds: [] as string[],
      });
    }
    const [a, b] = tenants as [(typeof tenants)[0], (typeof tenants)[0]];
    const wake = async (tenant: typeof a) =>
      tenant.runIds.push((await invoke(tenant.owner, tenant.worker.id)).id);
    // The first wakes wait for the runners; the rest come while both runners are claiming.
    await wake(b);
    await wake(a);
    const processes = new Map<typeof a, RunnerProcess>();
    for (const tenant of [a, b]) {
      const runner = startRunnerProcess(stack.baseUrl, tenant.registered.token, {
        PATH: `${claude.binDir}:${process.env.PATH ?? ""}`,
      });
      runners.push(runner);
      processes.set(tenant, runner);
    }
    for (let round = 0; round < 2; round++) for (const tenant of [b, a]) await wake(tenant);

    for (const tenant of [a, b]) {
      const other = tenant === a ? b : a;
      const launcherPid = processes.get(tenant)?.child.pid;
      for (const runId of tenant.runIds) {
        const run = await until(tenant.owner, runId, (r) => r.status === "succeeded", `run ${runId}`, 60_000);
        expect(run.runnerId).toBe(tenant.registered.runner.id);
        const dump = (file: string) => readFileSync(path.join(dumps, runId, file), "utf8");
        // Run by a child of this tenant's runner process (the runner proper, under its launcher).
        expect(parentOf(Number(dump("ppid")))).toBe(launcherPid);
        expect(dump("env")).toContain(`TOKEN=${tenant.secretValue}`);
        expect(dump("env")).toContain(`PLATFORM_COMPANY_ID=${tenant.companyId}`);
        for (const seen of [dump("env"), dump("parent")]) expect(seen).not.toContain(other.secretValue);
      }
      expect(processes.get(tenant)?.lines.join("\n")).not.toContain(other.secretValue);
    }
    expect(readdirSync(dumps)).toHaveLength(6); // no run executed twice, none of anyone else's

    // The runner list shows what each runner found on its machine: the pinned Claude Code here.
    const listed = await a.owner.call<Array<{ id: string; capabilities: { clis?: unknown[] } | null }>>(
      "GET",
      `/api/companies/${a.companyId}/runners`,
    );
    expect(listed.body.map((runner) => runner.id)).toEqual([a.registered.runner.id]);
    expect(listed.body[0]?.capabilities?.clis).toContainEqual({
      adapterType: "claude_local",
      command: "claude",
      version: `${claude.version} (Claude Code)`,
    });
  }, 120_000);

  it("an agent process finds no runner token and no host secret in its, its parent's or its grandparent's environment", async () => {
    const companyId = await company(admin);
    const dump = path.join(scratch, `env-${suffix()}`);
    // The parent is the runner; the grandparent the launcher that re-executed it (clean-launch.ts),
    // which npm start gives only the runner's allowlist (docs/security.md).
    const worker = await agent(
      admin,
      companyId,
      sh(
        `env > ${dump}.env; tr '\\0' '\\n' < /proc/$PPID/environ > ${dump}.parent; ` +
          `launcher=$(sed 's/.*) //' /proc/$PPID/stat | cut -d' ' -f2); ` +
          `tr '\\0' '\\n' < /proc/$launcher/environ > ${dump}.launcher`,
      ),
    );
    const run = await invoke(admin, worker.id);
    await until(admin, run.id, (r) => r.status === "succeeded", "the env dump");
    const [own, parent, launcher] = ["env", "parent", "launcher"].map((kind) =>
      readFileSync(`${dump}.${kind}`, "utf8"),
    ) as [string, string, string];
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
      for (const seen of [own, parent, launcher]) expect(seen).not.toContain(secret);
    }
    expect(own).toContain(`PLATFORM_RUN_ID=${run.id}`);
    // Both runner processes hold only the runner's own settings and the allowlist (and, in the
    // runner, the number of the IPC pipe to its launcher that Node adds), nothing else.
    expect(namesIn(parent)).toContain("EDGE_URL");
    expect(namesIn(launcher)).toContain("EDGE_URL");
    const nodeIpc = /^NODE_CHANNEL_(FD|SERIALIZATION_MODE)$/;
    for (const name of [...namesIn(parent), ...namesIn(launcher)])
      if (!nodeIpc.test(name)) expect(KEPT_ENV).toContain(name);
  });

  it("a timeout and a cancel each stop the whole process group within seconds, sleep included", async () => {
    const companyId = await company(admin);
    const timedPid = path.join(scratch, `timed-${suffix()}.pid`);
    const timed = await agent(admin, companyId, sh(`sleep 300 & echo $! > ${timedPid}; wait`, 2));
    const run = await invoke(admin, timed.id);
    const ended = await until(
      admin,
      run.id,
      (r) => r.status !== "queued" && r.status !== "running",
      "the timeout",
    );
    expect(ended.status).toBe("timed_out");
    // Within 10 s of the run starting (the edge's own clock for both), and not before the limit.
    const ranMs = Date.parse(ended.finishedAt ?? "") - Date.parse(ended.startedAt ?? "");
    expect(ranMs).toBeGreaterThanOrEqual(2_000);
    expect(ranMs).toBeLessThan(10_000);
    // The group is stopped before the runner reports the run finished: the sleep is gone already.
    expect(alive(Number(readFileSync(timedPid, "utf8")))).toBe(false);

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
    // Made in beforeAll, so the wait overlaps the tests above.
    const { routineId, createdAt } = everyMinute;
    const fired = await scheduledRoutineRun(
      admin,
      routineId,
      Math.max(1_000, createdAt + 70_000 - Date.now()),
    );
    expect(Date.parse(fired.createdAt) - createdAt).toBeLessThan(70_000);
  }, 90_000);
});
