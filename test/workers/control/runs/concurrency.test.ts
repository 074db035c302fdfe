// Concurrency caps (issue 32): a company's maxConcurrentRuns bounds how many of its runs execute at
// once across all runners, and a runner's maxConcurrentRuns bounds what runs on it whatever slots it
// claims; queued runs wait in order and show their place (queuePosition). Runs are handed out over a
// real runner link (WebSocket to /runner/v1/link), finished by the test as a runner would.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { eventually } from "../../patience";
import { addMembership, boardUser, seedAgent, seedCompany } from "../helpers";
import { claimOne, openRunnerLink, type RunAssignment, registerRunner, runnerFor } from "../runner-link";

interface RunView {
  id: string;
  status: string;
  queuePosition: number | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

beforeEach(async () => {
  // Runs other suites left queued would be handed to this suite's runners (each serves one company,
  // but a stray run of the same company would not exist): only this company's runs matter below.
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
});

async function fiveQueuedRuns(headers: Record<string, string>, companyId: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 5; i += 1) {
    const agent = await seedAgent(companyId, { name: `Worker ${i}`, adapterConfig: { command: "true" } });
    const invoked = await call<RunView>("POST", `/api/agents/${agent.id}/heartbeat/invoke`, { headers });
    expect(invoked.status, JSON.stringify(invoked.body)).toBe(202);
    expect(invoked.body.queuePosition).toBe(i + 1);
    ids.push(invoked.body.id);
    // Distinct creation times: the queue's order is the order of the wakes.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return ids;
}

const runsOf = async (headers: Record<string, string>, companyId: string) =>
  (await call<RunView[]>("GET", `/api/companies/${companyId}/heartbeat-runs?limit=50`, { headers })).body;

/** The most runs that were executing at one instant, from their start and finish times. */
function peakConcurrency(runs: RunView[]): number {
  const edges = runs.flatMap((run) => [
    { at: Date.parse(run.startedAt ?? ""), step: 1 },
    { at: Date.parse(run.finishedAt ?? ""), step: -1 },
  ]);
  // A finish and a start at the same millisecond: the finish came first (the start waited for it).
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let now = 0;
  let peak = 0;
  for (const edge of edges) {
    now += edge.step;
    peak = Math.max(peak, now);
  }
  return peak;
}

describe("a company's cap on runs executing at once", () => {
  it("is set by owners only, 1 to 256 or null", async () => {
    const owner = await boardUser();
    const member = await boardUser();
    const company = await seedCompany(owner);
    await addMembership(company.id, member.userId, "member");
    const patch = (headers: Record<string, string>, body: unknown) =>
      call<{ maxConcurrentRuns: number | null }>("PATCH", `/api/companies/${company.id}`, { headers, body });
    expect((await patch(owner.headers, { maxConcurrentRuns: 0 })).status).toBe(400);
    expect((await patch(owner.headers, { maxConcurrentRuns: 257 })).status).toBe(400);
    expect((await patch(owner.headers, { maxConcurrentRuns: 1.5 })).status).toBe(400);
    expect((await patch(member.headers, { maxConcurrentRuns: 2 })).status).toBe(403);
    const set = await patch(owner.headers, { maxConcurrentRuns: 2 });
    expect(set.status).toBe(200);
    expect(set.body.maxConcurrentRuns).toBe(2);
    expect((await patch(owner.headers, { maxConcurrentRuns: null })).body.maxConcurrentRuns).toBeNull();
  });

  it("with a cap of 2 and five wakes, never more than 2 run at once and all five run in order", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const capped = await call("PATCH", `/api/companies/${company.id}`, {
      headers: owner.headers,
      body: { maxConcurrentRuns: 2 },
    });
    expect(capped.status).toBe(200);
    const queued = await fiveQueuedRuns(owner.headers, company.id);

    // Two runners with room for everything: the company's cap, not theirs, holds the line.
    const first = await runnerFor(owner, company.id);
    const second = await runnerFor(owner, company.id);
    first.send({ type: "claim", slots: 5 });
    second.send({ type: "claim", slots: 5 });
    await eventually(
      async () => [...first.frames, ...second.frames].filter((f) => f.type === "run").length === 2,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const handed = () =>
      [first, second].flatMap((link) =>
        link.frames.filter((f) => f.type === "run").map((f) => ({ link, run: f.run as RunAssignment })),
      );
    expect(handed()).toHaveLength(2);
    expect(new Set(handed().map((h) => h.run.runId))).toEqual(new Set(queued.slice(0, 2)));

    const waiting = (await runsOf(owner.headers, company.id)).filter((run) => run.status === "queued");
    expect(waiting.map((run) => [run.id, run.queuePosition])).toEqual(
      queued
        .slice(2)
        .map((id, i) => [id, i + 1])
        .reverse(),
    );

    // Each finish makes room for the next in line, on whichever runner asks.
    const finished = new Set<string>();
    while (finished.size < 5) {
      const running = handed().filter((h) => !finished.has(h.run.runId));
      expect(running.length).toBeLessThanOrEqual(2);
      const next = running[0];
      if (!next) throw new Error("nothing running, yet runs are left");
      next.link.send({ type: "finish", runId: next.run.runId, exitCode: 0, timedOut: false, logFrames: 0 });
      finished.add(next.run.runId);
      await eventually(
        async () =>
          (await runsOf(owner.headers, company.id)).find((run) => run.id === next.run.runId)?.status ===
          "succeeded",
      );
      if (handed().length < 5) await claimOne(next.link);
    }

    const runs = await runsOf(owner.headers, company.id);
    expect(runs.filter((run) => run.status === "succeeded")).toHaveLength(5);
    expect(peakConcurrency(runs)).toBe(2);
    const byStart = [...runs].sort((a, b) => Date.parse(a.startedAt ?? "") - Date.parse(b.startedAt ?? ""));
    expect(byStart.map((run) => run.id)).toEqual(queued);
  });
});

describe("a runner's cap", () => {
  it("runs at most its maxConcurrentRuns at once, whatever slots it claims", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const refused = await call("POST", `/api/companies/${company.id}/runners`, {
      headers: owner.headers,
      body: { name: "Too small", maxConcurrentRuns: 0 },
    });
    expect(refused.status).toBe(400);
    const registered = await call<{ runner: { maxConcurrentRuns: number }; token: string }>(
      "POST",
      `/api/companies/${company.id}/runners`,
      { headers: owner.headers, body: { name: "Small", maxConcurrentRuns: 1 } },
    );
    expect(registered.status).toBe(201);
    expect(registered.body.runner.maxConcurrentRuns).toBe(1);
    await fiveQueuedRuns(owner.headers, company.id);

    const link = await openRunnerLink(registered.body.token);
    link.send({ type: "claim", slots: 3 });
    await link.next((f) => f.type === "run");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(link.frames.filter((f) => f.type === "run")).toHaveLength(1);

    // Another runner of the company is not held by this one's cap.
    const other = await openRunnerLink((await registerRunner(owner, company.id)).token);
    other.send({ type: "claim", slots: 3 });
    await eventually(async () => other.frames.filter((f) => f.type === "run").length === 3);
  });
});

describe("the cap's count", () => {
  it("reads a company's running runs through its (company, status) index, not all its runs", async () => {
    const plan = await env.DB.prepare(
      "EXPLAIN QUERY PLAN SELECT count(*) FROM heartbeat_runs AS busy WHERE busy.company_id = ? AND busy.status = 'running'",
    )
      .bind("c")
      .all<{ detail: string }>();
    expect(plan.results.map((row) => row.detail).join("\n")).toContain("heartbeat_runs_company_status_idx");
  });
});
