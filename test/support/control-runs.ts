// Companies, agents and heartbeat runs through the API, for end-to-end suites that run agents on real
// runners: create them as a given user, wake an agent, and wait for its run to reach a state.
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import { type ApiClient, eventually } from "./api.ts";

export interface Run {
  id: string;
  status: string;
  errorReason: string | null;
  waitingForRunner: boolean;
  startedAt: string | null;
  finishedAt: string | null;
  runnerId: string | null;
}

export const suffix = () => Math.random().toString(36).slice(2, 8);

export async function createCompany(client: ApiClient): Promise<string> {
  const created = await client.call<{ id: string }>("POST", "/api/companies", { name: `Co ${suffix()}` });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

export async function createAgent(
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

/** An agent's adapterConfig that runs `script` with sh. */
export const sh = (script: string, timeoutSec = 60) => ({ command: "sh", args: ["-c", script], timeoutSec });

export async function invoke(client: ApiClient, agentId: string): Promise<Run> {
  const invoked = await client.call<Run>("POST", `/api/agents/${agentId}/heartbeat/invoke`);
  expect(invoked.status, JSON.stringify(invoked.body)).toBe(202);
  return invoked.body;
}

export const runOf = async (client: ApiClient, runId: string) =>
  (await client.call<Run>("GET", `/api/heartbeat-runs/${runId}`)).body;

/** The run once `done` holds for it. */
export function untilRun(
  client: ApiClient,
  runId: string,
  done: (run: Run) => boolean,
  what: string,
  ms = 30_000,
): Promise<Run> {
  return eventually(
    async () => {
      const run = await runOf(client, runId);
      return done(run) ? run : undefined;
    },
    ms,
    what,
  );
}

/** A routine assigned to `agentId` with an every-minute schedule trigger; answers the routine's id. */
export async function everyMinuteRoutine(
  client: ApiClient,
  companyId: string,
  agentId: string,
): Promise<string> {
  const project = await client.call<{ id: string }>("POST", `/api/companies/${companyId}/projects`, {
    name: "Chores",
  });
  expect(project.status, JSON.stringify(project.body)).toBe(201);
  const routine = await client.call<{ id: string }>("POST", `/api/companies/${companyId}/routines`, {
    title: "Every minute",
    assigneeAgentId: agentId,
    projectId: project.body.id,
  });
  expect(routine.status, JSON.stringify(routine.body)).toBe(201);
  const trigger = await client.call("POST", `/api/routines/${routine.body.id}/triggers`, {
    kind: "schedule",
    cronExpression: "* * * * *",
  });
  expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
  return routine.body.id;
}

/** The routine's first run its schedule fired, once there is one (none is fired by anyone else). */
export function scheduledRoutineRun(client: ApiClient, routineId: string, ms: number) {
  return eventually(
    async () => {
      const runs = await client.call<Array<{ source: string; createdAt: string }>>(
        "GET",
        `/api/routines/${routineId}/runs`,
      );
      return runs.body.find((run) => run.source === "schedule");
    },
    ms,
    "the schedule to fire",
  );
}

/** Whether `pid` is a live process (a zombie waiting to be reaped is not). */
export function alive(pid: number): boolean {
  try {
    return stateOf(pid) !== "Z";
  } catch {
    return false;
  }
}

/** /proc/<pid>/stat after the command name (which may hold spaces): state, ppid, ... */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

const stateOf = (pid: number): string | undefined => statFields(pid)[0];

/** The parent process id of a live process. */
export const parentOf = (pid: number): number => Number(statFields(pid)[1]);
