// The control plane's hot paths, on one local stack, each against the trivial GET /api/health
// measured the same way in the same run:
//   (a) GET /api/issues/:id, 16 connections, round-robin over 200 issues (autocannon, agent key; the
//       same with the board API key is printed for comparison);
//   (b) 200 sequential checkouts by one agent (its key), one per issue;
//   (c) issue create, sequential (board API key).
// And workerd's CPU per request of each (from /proc, less what workerd burns idle meanwhile), with the
// writes' CPU as a multiple of a read's measured the same way, one request at a time (issue 31: ≤ 3×),
// and of a read at 16 connections (how ../shared/bench-side measures it: there a read's fixed cost
// per request is shared by concurrent requests, a sequential write's is not).
// Setup goes through the HTTP API: a company, two agents, a key for each, the 200 issues. Before (a),
// every issue is read once, sequentially (its first read wakes its IssueDO and fills its cache); that
// pass is reported on its own row, and (a) then measures the steady state of agents polling issues.
// The stack is `npm start` (workerd serving the Worker; BENCH_STACK=dev for `npm run dev`'s
// wrangler dev, whose reload proxy caps even the trivial route: see docs/decisions.md).
// Targets: (a) ≥ 1,000 req/s and ≥ 0.5 of the trivial route; (b) and (c) p99 ≤ 50 ms.
// A run is clean only if every measured request answered as expected (2xx; the one probe of a
// second agent checking out a held issue must answer 409).
//
//   node bench/control.mjs          (or `npm run bench`)
//   BENCH_DURATION=5 node bench/control.mjs
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import {
  benchDurationSeconds,
  benchStack,
  bootStack,
  createAdminApiKey,
  DEFAULT_CONNECTIONS,
  isClean,
  measure,
  reportDirtyRun,
} from "./lib.mjs";
import { now, stats } from "./support/common.mjs";
import { isLostConnection } from "./support/session-api.mjs";
import { idleCpuRate, withCpu } from "./support/workerd-usage.mjs";

export const name = "control";
const ISSUES = 200;
const WARMUP_REQUESTS = 20;
export const TARGETS = { getRequestsPerSec: 1_000, getRatio: 0.5, sequentialP99Ms: 50, writeCpuPerRead: 3 };

/**
 * A non-GET request sent on a keep-alive connection the Worker's workerd had just closed never
 * reaches the Worker: served directly, the client sees the connection close with no response
 * ("other side closed"); through wrangler dev, its proxy answers this plain-text 503 itself
 * (cloudflare/workers-sdk#14641). The app never answers like that. Such a request is sent again
 * (checkout is idempotent for its owner; a resent create may leave one extra issue), its latency
 * counts both attempts, and the summary reports how many.
 */
const DEV_PROXY_LOST = "Your worker restarted mid-request";
let resends = 0;

/** The request, or null when its connection was lost before any answer (see DEV_PROXY_LOST). */
async function send(url, init) {
  try {
    return await fetch(url, init);
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : "";
    if (isLostConnection(cause)) return null;
    throw error;
  }
}

/** One JSON call; throws unless the status is the expected one. */
async function callJson(baseUrl, method, route, headers, body, expected) {
  for (let attempt = 1; ; attempt++) {
    const response = await send(`${baseUrl}${route}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = response ? await response.text() : "";
    const lost = response === null || (response.status === 503 && text.startsWith(DEV_PROXY_LOST));
    if (lost && attempt < 3) {
      resends++;
      continue;
    }
    if (response === null) throw new Error(`${method} ${route}: connection lost ${attempt} times`);
    if (expected !== undefined && response.status !== expected) {
      throw new Error(
        `${method} ${route}: expected ${expected}, got ${response.status}: ${text.slice(0, 300)}`,
      );
    }
    return { status: response.status, body: text && response.status < 500 ? JSON.parse(text) : null };
  }
}

/** A company, two agents with a key each: the cast of every measurement below. */
export async function setUp(baseUrl, apiKey) {
  const board = { "X-API-Key": apiKey };
  const suffix = Math.random().toString(36).slice(2, 8);
  const company = (await callJson(baseUrl, "POST", "/api/companies", board, { name: `Bench ${suffix}` }, 201))
    .body;
  const agents = [];
  for (const agentName of [`Builder ${suffix}`, `Rival ${suffix}`]) {
    const agent = (
      await callJson(
        baseUrl,
        "POST",
        `/api/companies/${company.id}/agents`,
        board,
        { name: agentName, role: "engineer", adapterType: "coder_local" },
        201,
      )
    ).body;
    const key = (await callJson(baseUrl, "POST", `/api/agents/${agent.id}/keys`, board, {}, 201)).body;
    agents.push({ id: agent.id, headers: { Authorization: `Bearer ${key.token}` } });
  }
  return { board, company, agents };
}

/**
 * `count` requests one after another over a keep-alive connection; latency per request in ms.
 * `request(i)` returns the response status; anything but `expected` makes the run dirty.
 */
async function sequential(count, request, expected = [200, 201]) {
  const latencies = [];
  let unexpected = 0;
  const started = now();
  for (let i = 0; i < count; i++) {
    const t0 = now();
    const status = await request(i);
    latencies.push(now() - t0);
    if (!expected.includes(status)) unexpected++;
  }
  const totalMs = now() - started;
  return {
    count,
    totalMs,
    requestsPerSec: (count * 1000) / totalMs,
    ...stats(latencies),
    non2xx: unexpected,
    errors: 0,
    total: count,
  };
}

const statusOf = async (baseUrl, method, route, headers, body) =>
  (await callJson(baseUrl, method, route, headers, body)).status;

/** GET /api/issues/:id with `connections` connections, each walking the ids round-robin. */
export async function measureIssueGet(baseUrl, headers, issueIds, duration) {
  let next = 0;
  const result = await autocannon({
    url: baseUrl,
    connections: DEFAULT_CONNECTIONS,
    duration,
    requests: [
      {
        method: "GET",
        headers,
        setupRequest: (request) => ({
          ...request,
          path: `/api/issues/${issueIds[next++ % issueIds.length]}`,
        }),
      },
    ],
  });
  return {
    requestsPerSec: result.requests.mean,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result.requests.total,
  };
}

/** (c): issue create, sequential; also how the 200 issues of (a) and (b) come to exist. */
export async function createIssues(baseUrl, board, companyId, count) {
  const ids = [];
  const run = await sequential(count, async (i) => {
    const res = await callJson(baseUrl, "POST", `/api/companies/${companyId}/issues`, board, {
      title: `Bench issue ${i}`,
      status: "todo",
    });
    if (res.status === 201) ids.push(res.body.id);
    return res.status;
  });
  return { run, ids };
}

/** (b): one agent checks out every issue in turn, then a rival's checkout of a held one must be 409. */
async function checkoutAll(baseUrl, issueIds, [builder, rival]) {
  const run = await sequential(issueIds.length, (i) =>
    statusOf(baseUrl, "POST", `/api/issues/${issueIds[i]}/checkout`, builder.headers, {
      agentId: builder.id,
      expectedStatuses: ["todo"],
    }),
  );
  const conflict = await statusOf(baseUrl, "POST", `/api/issues/${issueIds[0]}/checkout`, rival.headers, {
    agentId: rival.id,
    expectedStatuses: ["todo"],
  });
  return { run, conflictStatus: conflict };
}

/** Every issue's first GET, one after another: the cold path (IssueDO started, detail read from D1). */
const firstReads = (baseUrl, headers, issueIds) =>
  sequential(issueIds.length, (i) => statusOf(baseUrl, "GET", `/api/issues/${issueIds[i]}`, headers));

/** Every issue's GET again, one after another: the steady state (from the IssueDO's memory), sequential. */
const warmReads = firstReads;

/** The trivial route, sequentially, the way (b) and (c) are measured. */
const trivialSequential = (baseUrl, count) =>
  sequential(count, (_) => statusOf(baseUrl, "GET", "/api/health", {}));

function row(label, run, baseline) {
  return {
    measurement: label,
    "req/s": run.requestsPerSec.toFixed(0),
    "p50 ms": run.p50.toFixed(1),
    "p99 ms": run.p99.toFixed(1),
    "req/s ratio vs trivial": baseline ? (run.requestsPerSec / baseline.requestsPerSec).toFixed(2) : "1.00",
    "p50 × trivial": baseline ? (run.p50 / baseline.p50).toFixed(1) : "1.0",
    unexpected: run.non2xx + run.errors,
  };
}

const verdict = (met) => (met ? "met" : "NOT met");

function printReport(results) {
  const { baseline, issueGet, issueGetBoard, trivialSeq, firstRead, checkout, create, cpu } = results;
  console.log(
    benchStack() === "serve"
      ? "stack: npm start (workerd serves the built Worker)"
      : "stack: npm run dev (wrangler dev, every request through its reload proxy)",
  );
  console.table([
    row(`GET /api/health (trivial), ${DEFAULT_CONNECTIONS} connections`, baseline, null),
    row(`(a) GET /api/issues/:id, agent key, ${DEFAULT_CONNECTIONS} connections`, issueGet, baseline),
    row(`    the same with the board API key (for comparison)`, issueGetBoard, baseline),
    row("GET /api/health (trivial), sequential", trivialSeq, null),
    row(`    first GET of each of ${firstRead.count} issues, sequential (cold)`, firstRead, trivialSeq),
    row(`    every GET again, sequential (warm)`, results.warmRead, trivialSeq),
    row(`(b) POST …/checkout, ${checkout.count} sequential`, checkout, trivialSeq),
    row(`(c) POST …/issues (create), ${create.count} sequential`, create, trivialSeq),
  ]);
  const { targets } = results;
  console.log(
    `(a) GET issue: ${issueGet.requestsPerSec.toFixed(0)} req/s (target >= ${TARGETS.getRequestsPerSec}: ` +
      `${verdict(targets.getRequestsPerSec)}), ratio vs trivial ${results.getRatio.toFixed(2)} ` +
      `(target >= ${TARGETS.getRatio}: ${verdict(targets.getRatio)})`,
  );
  console.log(
    `(b) ${checkout.count} sequential checkouts: ${(checkout.totalMs / 1000).toFixed(2)} s, ` +
      `${checkout.requestsPerSec.toFixed(0)} req/s, p50 ${checkout.p50.toFixed(1)} / p99 ${checkout.p99.toFixed(1)} ms ` +
      `(target p99 <= ${TARGETS.sequentialP99Ms} ms: ${verdict(targets.checkoutP99)}); ` +
      `a rival's checkout of a held issue answered ${results.conflictStatus}`,
  );
  console.log(
    `(c) issue create: ${create.requestsPerSec.toFixed(0)} req/s, p50 ${create.p50.toFixed(1)} / ` +
      `p99 ${create.p99.toFixed(1)} ms (target p99 <= ${TARGETS.sequentialP99Ms} ms: ${verdict(targets.createP99)})`,
  );
  if (!cpu) return console.log("workerd CPU per request: not measured (no workerd under /proc)");
  console.log(`workerd CPU per request (less its idle ${cpu.idleMsPerSecond.toFixed(1)} ms/s):`);
  console.table(
    Object.entries(cpu.kinds).map(([kind, value]) => ({
      request: kind,
      "CPU ms": value.cpuMs.toFixed(2),
      "× read (sequential)": value.timesSequentialRead.toFixed(2),
      [`× read (${DEFAULT_CONNECTIONS} connections)`]: value.timesConcurrentRead.toFixed(2),
    })),
  );
  console.log(
    `write CPU per request <= ${TARGETS.writeCpuPerRead}x a read's, both one at a time: create ` +
      `${verdict(targets.createCpu)}, checkout ${verdict(targets.checkoutCpu)}`,
  );
}

/** Each measured kind's CPU per request, and as a multiple of a read's (sequential and concurrent). */
function cpuReport({ warmRead, issueGet, create, checkout }, idleMsPerMs) {
  if ([warmRead, issueGet, create, checkout].some((measured) => measured.cpuMs === null)) return null;
  const of = (measured) => ({
    cpuMs: measured.cpuMs,
    timesSequentialRead: measured.cpuMs / warmRead.cpuMs,
    timesConcurrentRead: measured.cpuMs / issueGet.cpuMs,
  });
  return {
    idleMsPerSecond: idleMsPerMs * 1000,
    kinds: {
      "GET issue, sequential (warm)": of(warmRead),
      [`GET issue, ${DEFAULT_CONNECTIONS} connections`]: of(issueGet),
      create: of(create),
      checkout: of(checkout),
    },
  };
}

export async function run() {
  const duration = benchDurationSeconds();
  const stack = await bootStack();
  try {
    const { baseUrl, pid } = stack;
    const { board, company, agents } = await setUp(baseUrl, await createAdminApiKey(baseUrl));

    console.error("warm-up (discarded)");
    const warm = await createIssues(baseUrl, board, company.id, WARMUP_REQUESTS);
    await trivialSequential(baseUrl, WARMUP_REQUESTS);
    await measure({ url: `${baseUrl}/api/health`, duration: 2 });
    await measureIssueGet(baseUrl, agents[0].headers, warm.ids, 2);

    const idle = await idleCpuRate(pid);
    console.error(`(c) creating ${ISSUES} issues sequentially`);
    const created = await withCpu(pid, idle, () => createIssues(baseUrl, board, company.id, ISSUES));
    if (created.ids.length !== ISSUES)
      throw new Error(`only ${created.ids.length} of ${ISSUES} issues created`);
    console.error("trivial route, sequentially");
    const trivialSeq = await trivialSequential(baseUrl, ISSUES);
    console.error(`first GET of each of the ${ISSUES} issues, sequentially`);
    const firstRead = await firstReads(baseUrl, agents[0].headers, created.ids);
    console.error(`every issue's GET again, sequentially (warm)`);
    const warmRead = await withCpu(pid, idle, () => warmReads(baseUrl, agents[0].headers, created.ids));

    console.error(`measuring GET /api/health (${duration} s, ${DEFAULT_CONNECTIONS} connections)`);
    const baseline = await measure({ url: `${baseUrl}/api/health`, duration });
    console.error(`(a) measuring GET /api/issues/:id (${duration} s, ${DEFAULT_CONNECTIONS} connections)`);
    const issueGet = await withCpu(pid, idle, () =>
      measureIssueGet(baseUrl, agents[0].headers, created.ids, duration),
    );
    console.error(`(a) for comparison, with the board API key (${duration} s)`);
    const issueGetBoard = await measureIssueGet(baseUrl, board, created.ids, duration);

    console.error(`(b) ${ISSUES} sequential checkouts`);
    const checkout = await withCpu(pid, idle, () => checkoutAll(baseUrl, created.ids, agents));
    const cpu = cpuReport({ warmRead, issueGet, create: created, checkout }, idle);

    const getRatio = issueGet.requestsPerSec / baseline.requestsPerSec;
    const targets = {
      getRequestsPerSec: issueGet.requestsPerSec >= TARGETS.getRequestsPerSec,
      getRatio: getRatio >= TARGETS.getRatio,
      checkoutP99: checkout.run.p99 <= TARGETS.sequentialP99Ms,
      createP99: created.run.p99 <= TARGETS.sequentialP99Ms,
      ...(cpu
        ? {
            createCpu: cpu.kinds.create.timesSequentialRead <= TARGETS.writeCpuPerRead,
            checkoutCpu: cpu.kinds.checkout.timesSequentialRead <= TARGETS.writeCpuPerRead,
          }
        : {}),
    };
    const runs = [
      baseline,
      issueGet,
      issueGetBoard,
      trivialSeq,
      firstRead,
      warmRead,
      checkout.run,
      created.run,
    ];
    const clean = runs.every(isClean) && checkout.conflictStatus === 409;
    const results = {
      baseline,
      issueGet,
      issueGetBoard,
      trivialSeq,
      firstRead,
      warmRead,
      checkout: checkout.run,
      create: created.run,
      conflictStatus: checkout.conflictStatus,
      getRatio,
      targets,
      cpu,
    };
    printReport(results);
    if (resends > 0) console.log(`resent ${resends} request(s) lost on a closed keep-alive connection`);
    if (!clean) {
      reportDirtyRun("control bench (see the table above)", {
        non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0) + (checkout.conflictStatus === 409 ? 0 : 1),
        errors: runs.reduce((sum, r) => sum + r.errors, 0),
        total: runs.reduce((sum, r) => sum + r.total, 0),
      });
    }
    return {
      name,
      clean,
      meetsTargets: Object.values(targets).every(Boolean),
      targetValues: TARGETS,
      resends,
      stack: benchStack(),
      durationSeconds: duration,
      connections: DEFAULT_CONNECTIONS,
      ...results,
      checkoutRatio: checkout.run.requestsPerSec / trivialSeq.requestsPerSec,
      createRatio: created.run.requestsPerSec / trivialSeq.requestsPerSec,
    };
  } finally {
    await stack.stop();
  }
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const summary = await run();
  if (!summary.clean) process.exitCode = 1;
}
