// Control-plane automation on one local stack (`npm start`: workerd serving the built Worker, and the local runner it starts for the admin):
//   (a) wake → runner start: POST /api/agents/:id/heartbeat/invoke, then the run's startedAt (stamped
//       by the edge when a runner claims it), sequentially; the agent's command exits at once. Compared
//       with the trivial GET /api/health measured sequentially in the same run.
//   (b) routine fire throughput: signed POSTs to /api/routine-triggers/public/:publicId/fire (each
//       with its own timestamp and body), CONCURRENCY loops for BENCH_DURATION seconds; compared with
//       the trivial route driven by the same loops.
//
//   node bench/automation.mjs          (or `npm run bench`)
//   BENCH_DURATION=5 node bench/automation.mjs
import { createHmac } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { benchDurationSeconds, bootStack, createAdminApiKey } from "./lib.mjs";
import { now, sleep, stats } from "./support/common.mjs";

export const name = "automation";
const WAKES = 40;
const CONCURRENCY = 8;
const DEV_PROXY_LOST = "Your worker restarted mid-request";

async function callJson(baseUrl, method, route, headers, body, expected) {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${baseUrl}${route}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status === 503 && text.startsWith(DEV_PROXY_LOST) && attempt < 3) continue;
    if (expected !== undefined && response.status !== expected)
      throw new Error(
        `${method} ${route}: expected ${expected}, got ${response.status}: ${text.slice(0, 300)}`,
      );
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }
}

async function setUp(baseUrl, board) {
  const suffix = Math.random().toString(36).slice(2, 8);
  const company = (await callJson(baseUrl, "POST", "/api/companies", board, { name: `Auto ${suffix}` }, 201))
    .body;
  const agent = (
    await callJson(
      baseUrl,
      "POST",
      `/api/companies/${company.id}/agents`,
      board,
      {
        name: `Quick ${suffix}`,
        role: "engineer",
        adapterType: "coder_local",
        adapterConfig: { command: process.execPath, args: ["-e", ""], timeoutSec: 30 },
      },
      201,
    )
  ).body;
  const project = (
    await callJson(
      baseUrl,
      "POST",
      `/api/companies/${company.id}/projects`,
      board,
      { name: `P ${suffix}` },
      201,
    )
  ).body;
  return { company, agent, project };
}

/** (a): one wake at a time; latency = the run's startedAt minus the moment the wake was sent. */
async function wakeToStart(baseUrl, board, agentId) {
  const latencies = [];
  for (let i = 0; i < WAKES; i++) {
    const sentAt = Date.now();
    const run = (
      await callJson(baseUrl, "POST", `/api/agents/${agentId}/heartbeat/invoke`, board, undefined, 202)
    ).body;
    let detail = run;
    while (detail.startedAt === null || detail.finishedAt === null) {
      await sleep(5);
      detail = (await callJson(baseUrl, "GET", `/api/heartbeat-runs/${run.id}`, board, undefined, 200)).body;
      if (Date.now() - sentAt > 30_000) throw new Error(`run ${run.id} did not start and finish within 30 s`);
    }
    if (detail.status !== "succeeded")
      throw new Error(`run ${run.id} ended ${detail.status}: ${detail.errorReason}`);
    latencies.push(Date.parse(detail.startedAt) - sentAt);
  }
  return stats(latencies);
}

async function trivialSequential(baseUrl, count) {
  const latencies = [];
  for (let i = 0; i < count; i++) {
    const t0 = now();
    await callJson(baseUrl, "GET", "/api/health", {}, undefined, 200);
    latencies.push(now() - t0);
  }
  return stats(latencies);
}

/** `request()` in CONCURRENCY loops for `seconds`; completed requests per second and failures. */
async function loops(seconds, request) {
  const deadline = now() + seconds * 1000;
  let done = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (now() < deadline) {
        if (await request()) done++;
        else failed++;
      }
    }),
  );
  return { perSecond: done / seconds, done, failed };
}

function signedFire(webhookUrl, secret) {
  let counter = 0;
  return async () => {
    const body = JSON.stringify({ n: counter++, at: Date.now() });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
    const response = await fetch(webhookUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "X-Platform-Timestamp": timestamp,
        "X-Platform-Signature": `sha256=${signature}`,
      },
      body,
    });
    await response.arrayBuffer();
    return response.status === 202;
  };
}

async function webhookTrigger(baseUrl, board, company, agent, project) {
  const routine = (
    await callJson(
      baseUrl,
      "POST",
      `/api/companies/${company.id}/routines`,
      board,
      { title: "Bench routine", assigneeAgentId: agent.id, projectId: project.id },
      201,
    )
  ).body;
  const created = (
    await callJson(baseUrl, "POST", `/api/routines/${routine.id}/triggers`, board, { kind: "webhook" }, 201)
  ).body;
  return created.secretMaterial;
}

export async function run() {
  const duration = benchDurationSeconds();
  const stack = await bootStack();
  try {
    const { baseUrl } = stack;
    const board = { "X-API-Key": await createAdminApiKey(baseUrl) };
    const { company, agent, project } = await setUp(baseUrl, board);

    console.error("warm-up (discarded)");
    await trivialSequential(baseUrl, 20);
    console.error("trivial route, sequentially");
    const trivial = await trivialSequential(baseUrl, WAKES * 5);
    console.error(`(a) ${WAKES} wakes, one at a time`);
    const wake = await wakeToStart(baseUrl, board, agent.id);

    const material = await webhookTrigger(baseUrl, board, company, agent, project);
    console.error(`trivial route, ${CONCURRENCY} loops, ${duration} s`);
    const trivialLoops = await loops(duration, async () => {
      const response = await fetch(`${baseUrl}/api/health`);
      await response.arrayBuffer();
      return response.status === 200;
    });
    console.error(`(b) signed routine fires, ${CONCURRENCY} loops, ${duration} s`);
    const fires = await loops(duration, signedFire(material.webhookUrl, material.webhookSecret));

    const fireRatio = fires.perSecond / trivialLoops.perSecond;
    console.table([
      {
        measurement: "GET /api/health, sequential",
        p50: trivial.p50.toFixed(1),
        p99: trivial.p99.toFixed(1),
      },
      {
        measurement: "(a) wake → runner start",
        p50: wake.p50.toFixed(1),
        p99: wake.p99.toFixed(1),
        "p50 × trivial": (wake.p50 / trivial.p50).toFixed(1),
      },
    ]);
    console.table([
      {
        measurement: `GET /api/health, ${CONCURRENCY} loops`,
        "req/s": trivialLoops.perSecond.toFixed(0),
        failed: trivialLoops.failed,
      },
      {
        measurement: `(b) routine fire, ${CONCURRENCY} loops`,
        "req/s": fires.perSecond.toFixed(0),
        failed: fires.failed,
        "ratio vs trivial": fireRatio.toFixed(2),
      },
    ]);
    const clean = trivialLoops.failed === 0 && fires.failed === 0;
    return { name, clean, durationSeconds: duration, trivial, wake, trivialLoops, fires, fireRatio };
  } finally {
    await stack.stop();
  }
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const summary = await run();
  if (!summary.clean) process.exitCode = 1;
}
