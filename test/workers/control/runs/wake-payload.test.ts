// A routine webhook's body reaches the agent: the fire stores it with the routine run, and the run it
// queues hands it to the runner that claims it (RunAssignment.wakePayload, which the runner writes to
// a file named in PLATFORM_WAKE_PAYLOAD_PATH; test/bridge/runner/wake-payload.test.ts). Only that
// run carries it: a later wake of the same agent gets none, and it is never inlined into the env.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { boardUser, seedAgent, seedCompany } from "../helpers";
import { addTrigger, createRoutine, fire, seedProject } from "../routines/fixtures";
import { claimOne, runnerFor } from "../runner-link";

beforeEach(async () => {
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
});

describe("a routine webhook's payload on the run", () => {
  it("the run a webhook fire queues carries the body to its runner, and no other run does", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id, { adapterConfig: { command: "node", cwd: "/work" } });
    const tenant = { board, company, agent, projectId: await seedProject(board, company.id) };
    const routine = await createRoutine(tenant, { concurrencyPolicy: "always_enqueue" });
    const { trigger, secretMaterial } = await addTrigger(tenant, routine.id, { kind: "webhook" });
    const body = '{"event":"deploy","ref":"main","commits":[{"id":"abc123"}]}';
    const fired = await fire(trigger.publicId ?? "", secretMaterial?.webhookSecret ?? "", body);
    expect(fired.status, JSON.stringify(fired.body)).toBe(202);
    expect(fired.body.heartbeatRunId).toBeTruthy();

    const link = await runnerFor(board, company.id);
    const run = (await claimOne(link)) as unknown as { runId: string; wakePayload?: string | null };
    expect(run.runId).toBe(fired.body.heartbeatRunId);
    expect(JSON.parse(run.wakePayload ?? "null")).toEqual(JSON.parse(body));
    expect(JSON.stringify((run as unknown as { env: unknown }).env)).not.toContain("abc123");
    link.send({ type: "finish", runId: run.runId, exitCode: 0, timedOut: false, logFrames: 0 });

    const invoked = await call<{ id: string }>("POST", `/api/agents/${agent.id}/heartbeat/invoke`, {
      headers: board.headers,
    });
    expect(invoked.status).toBe(202);
    const manual = (await claimOne(link)) as unknown as { runId: string; wakePayload?: string | null };
    expect(manual.runId).toBe(invoked.body.id);
    expect(manual.wakePayload ?? null).toBeNull();
  });
});
