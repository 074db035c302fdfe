// A routine webhook's payload reaches the agent's process, end to end on the real local stack: an
// external system POSTs a signed body to the trigger's public URL, the routine queues a run of its
// agent, a runner process claims it and starts the agent's command, which finds the body in the file
// PLATFORM_WAKE_PAYLOAD_PATH names (inside the run's own directory) and says what it read. The next
// run of the same agent, woken by hand, has no payload. (npm start's own runner is off: RUNNER=0.)
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { type RunnerProcess, startRunnerProcess } from "../support/runner-process.ts";
import { type Stack, startStack } from "../support/stack.ts";

/** The agent: reports the variable's file name and the payload's `event`, or that it has none. */
const AGENT = `
const fs = require("node:fs");
const file = process.env.PLATFORM_WAKE_PAYLOAD_PATH;
if (!file) { console.log("no payload"); process.exit(0); }
const payload = JSON.parse(fs.readFileSync(file, "utf8"));
console.log("payload " + require("node:path").basename(file) + " event=" + payload.event + " run=" + file.includes(process.env.PLATFORM_RUN_ID));
`;

interface Run {
  id: string;
  status: string;
  routineRunId: string | null;
  logExcerpt?: string | null;
}

let stack: Stack;
let board: ApiClient;
let runner: RunnerProcess | undefined;

beforeAll(async () => {
  stack = await startStack({ env: { BRIDGE: "0", RUNNER: "0" } });
  board = await adminClient(stack.baseUrl);
});

afterAll(async () => {
  await runner?.kill("SIGTERM");
  await stack?.stop();
});

async function created<T>(method: string, path: string, body: unknown): Promise<T> {
  const res = await board.call<T>(method, path, body);
  expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

const endedRun = (agentId: string, companyId: string, id: string) =>
  eventually(
    async () => {
      const runs = await board.call<Run[]>(
        "GET",
        `/api/companies/${companyId}/heartbeat-runs?agentId=${agentId}`,
      );
      const run = runs.body.find((item) => item.id === id);
      if (run?.status !== "succeeded" && run?.status !== "failed") return undefined;
      return (await board.call<Run>("GET", `/api/heartbeat-runs/${id}`)).body;
    },
    60_000,
    "the run to end",
  );

describe("a routine webhook's payload on the agent's run", () => {
  it("the fired body is a file named by PLATFORM_WAKE_PAYLOAD_PATH for that run only", async () => {
    const company = await created<{ id: string }>("POST", "/api/companies", { name: "Payload Co" });
    const agent = await created<{ id: string }>("POST", `/api/companies/${company.id}/agents`, {
      name: "Hook Reader",
      role: "engineer",
      adapterType: "process",
      adapterConfig: { command: process.execPath, args: ["-e", AGENT], timeoutSec: 60 },
    });
    const project = await created<{ id: string }>("POST", `/api/companies/${company.id}/projects`, {
      name: "Deploys",
    });
    const routine = await created<{ id: string }>("POST", `/api/companies/${company.id}/routines`, {
      title: "On deploy",
      assigneeAgentId: agent.id,
      projectId: project.id,
      concurrencyPolicy: "always_enqueue",
    });
    const trigger = await created<{
      trigger: { publicId: string };
      secretMaterial: { webhookSecret: string };
    }>("POST", `/api/routines/${routine.id}/triggers`, { kind: "webhook" });
    const registered = await created<{ token: string }>("POST", `/api/companies/${company.id}/runners`, {
      name: "payload runner",
    });
    runner = startRunnerProcess(stack.baseUrl, registered.token);

    const body = JSON.stringify({ event: "deploy-finished", ref: "main" });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = createHmac("sha256", trigger.secretMaterial.webhookSecret)
      .update(`${timestamp}.${body}`)
      .digest("hex");
    const fired = await fetch(
      `${stack.baseUrl}/api/routine-triggers/public/${trigger.trigger.publicId}/fire`,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "X-Platform-Timestamp": timestamp,
          "X-Platform-Signature": `sha256=${signature}`,
        },
        body,
      },
    );
    const firedBody = (await fired.json()) as { heartbeatRunId: string };
    expect(fired.status, JSON.stringify(firedBody)).toBe(202);

    const run = await endedRun(agent.id, company.id, firedBody.heartbeatRunId);
    expect(run.status, run.logExcerpt ?? "").toBe("succeeded");
    expect(run.logExcerpt).toContain("payload wake-payload.json event=deploy-finished run=true");

    const invoked = await created<{ id: string }>("POST", `/api/agents/${agent.id}/heartbeat/invoke`, {});
    const manual = await endedRun(agent.id, company.id, invoked.id);
    expect(manual.logExcerpt).toContain("no payload");
  });
});
