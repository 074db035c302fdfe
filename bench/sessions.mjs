// Session start-up and bridge memory at scale, on the simulated WhatsApp network: one stack
// (SIMULATOR=1, BRIDGE=0) and two real bridge processes (`tsx bridge/src/main.ts`, ids bench-a and
// bench-b), as the e2e failover suite runs them.
//
//   node bench/sessions.mjs          (or `npm run bench`, which also writes bench/results/latest.json)
//   BENCH_SESSIONS=1,100 node bench/sessions.mjs
//
// Measured, for each N in BENCH_SESSIONS (default 1,100,1000):
// - warm start: sessions linked once before (creds stored) and then stopped; `POST .../start` of all N
//   (32 requests in flight) until GET /api/sessions lists each one "connected" (polled every 100 ms);
// - cold path (N = 1 and 100 only): create + start -> GET .../qr answers 200 -> simulated scan ->
//   listed "connected" (the 515 restart after the scan included);
// - bridge resident memory (VmRSS of each bridge's node process) with 0 sessions and with the largest
//   N connected, per connected session; and, unless BENCH_SINGLE_BRIDGE=0 or time ran out, the same
//   with a single fresh bridge holding all of the largest N.
// Every latency is also printed against the p50 of the trivial GET /api/health on the same stack.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bootStack, createAdminApiKey } from "./lib.mjs";
import {
  bridgeExit,
  bridgeProblems,
  bridgeRssKib,
  connectedSplit,
  createBridgeToken,
  dumpBridgeLogs,
  isUp,
  markLines,
  RELEASE_TIMEOUT_MS,
  startBridge,
  stopBridge,
  waitForFleetLink,
  waitForRelease,
} from "./support/bridge-processes.mjs";
import {
  internalId,
  internalIds,
  ms,
  now,
  percentile,
  pool,
  progress,
  sleep,
  stats,
} from "./support/common.mjs";
import { Api, ListingWatcher, POLL_INTERVAL_MS, REQUEST_TIMEOUT_MS } from "./support/session-api.mjs";
import { printReport, TARGET_SESSIONS_PER_BRIDGE, targetVerdict } from "./support/sessions-report.mjs";

export const name = "sessions";
export { TARGET_SESSIONS_PER_BRIDGE };

const DEFAULT_SESSIONS = [1, 100, 1000];
const COLD_SESSIONS = [1, 100];
/** Requests in flight at once for starts, stops and the cold path. */
const CONCURRENCY = 32;
/**
 * The untimed setup links sessions with more in flight (each spends most of its time waiting for
 * its QR and its "connected"), and watches the listing less often: it is the longest phase.
 */
const SETUP_CONCURRENCY = Number(process.env.BENCH_SETUP_CONCURRENCY ?? 128);
const SETUP_POLL_INTERVAL_MS = Number(process.env.BENCH_SETUP_POLL_MS ?? 250);
const BASELINE_REQUESTS = 200;
const BASELINE_WARMUP = 20;
/** The single-bridge variant is skipped when the bench has already run longer than this. */
const SINGLE_BRIDGE_DEADLINE_MS = Number(process.env.BENCH_SINGLE_BRIDGE_DEADLINE_MS ?? 180_000);

/** Generous per-phase limits: a stuck session fails its phase instead of hanging the bench. */
const phaseTimeoutMs = (sessions) => 30_000 + 80 * sessions;

function sessionCounts() {
  const raw = process.env.BENCH_SESSIONS;
  if (!raw) return DEFAULT_SESSIONS;
  const counts = raw.split(",").map((part) => Number(part.trim()));
  if (counts.length === 0 || counts.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(`BENCH_SESSIONS must be a comma-separated list of positive integers, got ${raw}`);
  }
  return [...new Set(counts)].sort((a, b) => a - b);
}

// ── Phases ─────────────────────────────────────────────────────────────────────────────────────

/** 200 sequential GET /api/health (after 20 discarded), with the same HTTP client as every phase. */
async function measureBaseline(baseUrl) {
  const latencies = [];
  let non2xx = 0;
  for (let i = 0; i < BASELINE_WARMUP + BASELINE_REQUESTS; i++) {
    const started = now();
    const response = await fetch(`${baseUrl}/api/health`, {
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    await response.arrayBuffer();
    if (i >= BASELINE_WARMUP) {
      latencies.push(now() - started);
      if (response.status !== 200) non2xx++;
    }
  }
  return { route: "GET /api/health", requests: BASELINE_REQUESTS, non2xx, ...stats(latencies) };
}

/** Polls GET .../qr (which itself waits for a starting session's first QR; 202 past its bound) until 200; returns the arrival time, or null at the deadline. */
async function waitForQr(api, id, deadline) {
  while (now() < deadline) {
    const result = await api.call("GET", `/api/sessions/${id}/qr`);
    if (result.status === 200) return now();
    if (result.status !== 404 && result.status !== 202) {
      api.failures.push({ phase: "qr", request: `GET /api/sessions/${id}/qr`, status: result.status });
    }
    await sleep(POLL_INTERVAL_MS);
  }
  return null;
}

/** POST .../simulate/scan, retried a few times on 503 (the QR can be between bridge and edge). */
async function scan(api, phase, id) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const result = await api.call("POST", `/api/sessions/${id}/simulate/scan`);
    if (result.status === 200) return true;
    if (result.status !== 503 || attempt === 4) {
      api.failures.push({
        phase,
        request: `POST /api/sessions/${id}/simulate/scan`,
        status: result.status,
        body: JSON.stringify(result.body).slice(0, 300),
      });
      return false;
    }
    await sleep(100);
  }
  return false;
}

/**
 * Create + start + QR + scan of each id until listed "connected". Timed per session from the create
 * request: to the QR (GET .../qr 200) and to "connected".
 */
async function linkSessions(api, watcher, phase, ids, timed = true) {
  const started = now();
  const deadline = started + phaseTimeoutMs(ids.length);
  const toQr = [];
  const toConnected = [];
  const failed = [];
  const fail = (id, stage) => failed.push({ id, internalId: internalId(id), stage });
  await pool(ids, timed ? CONCURRENCY : SETUP_CONCURRENCY, async (id) => {
    const t0 = now();
    const created = await api.expect(phase, "POST", "/api/sessions", { name: id, sessionId: id });
    if (created.status !== 200) return fail(id, "create");
    internalIds.set(id, created.body?.data?.id ?? id);
    const start = await api.expect(phase, "POST", `/api/sessions/${id}/start`);
    if (start.status !== 200) return fail(id, "start");
    // Timed runs ask GET .../qr like a client would; the untimed setup watches the listing instead.
    const qrAt = timed
      ? await waitForQr(api, id, deadline)
      : await watcher.waitFor(id, "scan_qr", t0, deadline);
    if (qrAt === null) return fail(id, timed ? "no QR (GET .../qr never 200)" : "never listed scan_qr");
    toQr.push(qrAt - t0);
    const connected = watcher.waitFor(id, "connected", now(), deadline);
    if (!(await scan(api, phase, id))) {
      watcher.cancel(id);
      return fail(id, "scan");
    }
    const connectedAt = await connected;
    if (connectedAt === null) return fail(id, "never listed connected after the scan");
    toConnected.push(connectedAt - t0);
  });
  if (failed.length) progress(`${phase}: ${failed.length} sessions failed`, failed.slice(0, 10));
  return {
    sessions: ids.length,
    connected: toConnected.length,
    failed: failed.slice(0, 20).map((f) => ({ ...f, lastListedState: watcher.lastState.get(f.id) ?? null })),
    wallMs: now() - started,
    toQr: stats(toQr),
    toConnected: stats(toConnected),
  };
}

/** POST .../stop of each id, then waits for the listing to say "stopped" and the bridges to let go. */
async function stopSessions(api, watcher, bridges, ids) {
  const marks = markLines(bridges);
  const sentAt = now();
  await pool(ids, CONCURRENCY, (id) => api.expect("stop", "POST", `/api/sessions/${id}/stop`));
  const arrivals = await watcher.waitAll(ids, "stopped", sentAt, sentAt + phaseTimeoutMs(ids.length));
  const notStopped = ids.filter((id) => arrivals.get(id) === null);
  const notReleased = await waitForRelease(bridges, marks, ids);
  const result = { sessions: ids.length, notStopped: notStopped.length, notReleased, wallMs: now() - sentAt };
  progress(
    `stopped ${ids.length - notStopped.length}/${ids.length} in ${ms(result.wallMs)}` +
      (notReleased ? `; ${notReleased} not let go by a bridge within ${RELEASE_TIMEOUT_MS} ms` : ""),
  );
  return result;
}

/** Starts every id (already linked, now stopped) and times each until it is listed "connected". */
async function warmStart(api, watcher, bridges, ids) {
  const marks = markLines(bridges);
  const startedAt = new Map();
  const arrivals = new Map();
  const waits = [];
  const t0 = now();
  const deadline = t0 + phaseTimeoutMs(ids.length);
  await pool(ids, CONCURRENCY, async (id) => {
    const sentAt = now();
    startedAt.set(id, sentAt);
    waits.push(watcher.waitFor(id, "connected", sentAt, deadline).then((at) => arrivals.set(id, at)));
    const result = await api.expect(`warm start ${ids.length}`, "POST", `/api/sessions/${id}/start`);
    if (result.status !== 200) watcher.cancel(id);
  });
  await Promise.all(waits);
  const latencies = [];
  const stuck = [];
  for (const id of ids) {
    const at = arrivals.get(id);
    if (at === null || at === undefined) stuck.push(id);
    else latencies.push(at - startedAt.get(id));
  }
  const lastConnected = Math.max(...ids.map((id) => arrivals.get(id) ?? 0));
  const wallMs = (stuck.length ? now() : lastConnected) - t0;
  const stuckStates = {};
  for (const id of stuck) {
    const state = watcher.lastState.get(id) ?? "unlisted";
    stuckStates[state] = (stuckStates[state] ?? 0) + 1;
  }
  const polls = watcher.polls.filter((poll) => poll.sentAt >= t0).map((poll) => poll.ms);
  return {
    sessions: ids.length,
    connected: latencies.length,
    listingPolls: { count: polls.length, p50: percentile(polls, 50), max: Math.max(0, ...polls) },
    stuck: stuck.length,
    stuckStates,
    stuckExamples: stuck.slice(0, 5),
    ...stats(latencies),
    wallMs,
    sessionsPerSec: latencies.length / (wallMs / 1000),
    split: connectedSplit(bridges, marks, ids),
    bridgesUp: bridges.every(isUp),
    problems: bridgeProblems(bridges, marks).slice(0, 20),
  };
}

function memoryReport(bridges, before, after, split) {
  return bridges.map((bridge) => {
    const held = split[bridge.id] ?? 0;
    const deltaKib = after.get(bridge).kib - before.get(bridge).kib;
    return {
      bridge: bridge.id,
      pid: after.get(bridge).pid,
      rssBeforeKib: before.get(bridge).kib,
      rssAfterKib: after.get(bridge).kib,
      sessions: held,
      kibPerSession: held ? deltaKib / held : Number.NaN,
    };
  });
}

const readRss = (bridges) => new Map(bridges.map((bridge) => [bridge, bridgeRssKib(bridge)]));

// ── Run ────────────────────────────────────────────────────────────────────────────────────────

/** Runs the whole benchmark on a fresh stack and returns its summary (clean: nothing failed). */
export async function run() {
  const benchStarted = Date.now();
  const counts = sessionCounts();
  const largest = counts[counts.length - 1];
  const coldCounts = COLD_SESSIONS.filter((n) => n <= largest);
  const stack = await bootStack({ SIMULATOR: "1", BRIDGE: "0" });
  const bridges = [];
  let watcher;
  let summary;
  let keepLogs = process.env.BENCH_KEEP_LOGS === "1";
  try {
    const api = new Api(stack.baseUrl, await createAdminApiKey(stack.baseUrl));
    watcher = new ListingWatcher(api);
    for (const id of ["bench-a", "bench-b"])
      bridges.push(startBridge(stack.baseUrl, id, await createBridgeToken(api, id)));
    await Promise.all(bridges.map(waitForFleetLink));
    progress(`bridges joined: ${bridges.map((b) => `${b.id} (pid ${b.nodePid})`).join(", ")}`);
    await sleep(500);
    const rssBefore = readRss(bridges);

    progress(`measuring the baseline: ${BASELINE_REQUESTS} sequential GET /api/health`);
    const baseline = await measureBaseline(stack.baseUrl);

    // Cold path; these sessions are then part of the pool of linked sessions.
    const linked = [];
    const cold = [];
    for (const n of coldCounts) {
      const ids = Array.from({ length: n }, (_, i) => `cold-${n}-${i}`);
      progress(`cold path: ${n} sessions (create, start, QR, scan, connected)`);
      const result = await linkSessions(api, watcher, `cold ${n}`, ids);
      cold.push(result);
      linked.push(...ids.filter((id) => watcher.lastState.get(id) === "connected"));
    }
    const missing = Math.max(0, largest - linked.length);
    if (missing) {
      progress(`setup (not timed): linking ${missing} more sessions`);
      const ids = Array.from({ length: missing }, (_, i) => `warm-${i}`);
      watcher.intervalMs = SETUP_POLL_INTERVAL_MS;
      const setup = await linkSessions(api, watcher, "setup", ids, false);
      watcher.intervalMs = POLL_INTERVAL_MS;
      progress(`setup: ${setup.connected}/${missing} connected in ${setup.wallMs.toFixed(0)} ms`);
      linked.push(...ids.filter((id) => watcher.lastState.get(id) === "connected"));
    }
    progress(`stopping ${linked.length} linked sessions`);
    const stops = [await stopSessions(api, watcher, bridges, linked)];

    const warm = [];
    let memory = null;
    for (const n of counts) {
      const ids = linked.slice(0, n);
      progress(`warm start: ${ids.length} sessions`);
      const result = { bridges: 2, ...(await warmStart(api, watcher, bridges, ids)) };
      warm.push(result);
      progress(
        `${result.connected}/${result.sessions} connected, p50 ${ms(result.p50)}, wall ${ms(result.wallMs)}`,
      );
      if (n === largest) {
        await sleep(1_000);
        memory = memoryReport(bridges, rssBefore, readRss(bridges), result.split);
      }
      stops.push(await stopSessions(api, watcher, bridges, ids));
    }

    let singleBridge = { skipped: "BENCH_SINGLE_BRIDGE=0" };
    const elapsed = Date.now() - benchStarted;
    if (process.env.BENCH_SINGLE_BRIDGE !== "0" && elapsed > SINGLE_BRIDGE_DEADLINE_MS) {
      singleBridge = { skipped: `out of time (${(elapsed / 1000).toFixed(0)} s elapsed)` };
    } else if (process.env.BENCH_SINGLE_BRIDGE !== "0") {
      progress(`single-bridge variant: stopping both bridges, one fresh bridge holds ${largest}`);
      for (const bridge of bridges) await stopBridge(bridge);
      const solo = startBridge(stack.baseUrl, "bench-solo", await createBridgeToken(api, "bench-solo"));
      bridges.push(solo);
      await waitForFleetLink(solo);
      await sleep(500);
      const soloBefore = readRss([solo]);
      const ids = linked.slice(0, largest);
      const result = { bridges: 1, ...(await warmStart(api, watcher, [solo], ids)) };
      await sleep(1_000);
      const soloMemory = memoryReport([solo], soloBefore, readRss([solo]), result.split);
      progress(`${result.connected}/${result.sessions} connected on ${solo.id}, p50 ${ms(result.p50)}`);
      // Not stopped: the bridge shuts down holding them (WhatsApp closed without logging out).
      await stopBridge(solo);
      progress(`${solo.id} shut down holding ${result.connected} sessions in ${ms(solo.stopMs)}`);
      singleBridge = { bridge: solo.id, warm: result, memory: soloMemory, shutdown: bridgeExit(solo) };
    }

    const polls = stats(watcher.polls.map((poll) => poll.ms));
    summary = {
      name,
      baseline,
      warm,
      cold,
      memory,
      singleBridge,
      polls,
      pollErrors: watcher.pollErrors.slice(0, 10),
      stops,
      bridgeShutdowns: bridges.filter((bridge) => bridge.stopMs !== undefined).map(bridgeExit),
      failures: api.failures,
      concurrency: CONCURRENCY,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    summary.target = targetVerdict(
      summary,
      warm.find((run) => run.sessions === largest),
    );
    summary.meetsTarget = summary.target.met;
    summary.clean =
      baseline.non2xx === 0 &&
      api.failures.length === 0 &&
      watcher.pollErrors.length === 0 &&
      stops.every((stop) => stop.notStopped === 0) &&
      cold.every((run) => run.connected === run.sessions) &&
      warm.every((run) => run.connected === run.sessions && run.bridgesUp) &&
      (!singleBridge.warm || singleBridge.warm.connected === singleBridge.warm.sessions);
    printReport(summary);
    if (!summary.clean)
      console.error("\nsessions bench NOT clean: see the failures and stuck sessions above");
    return summary;
  } catch (error) {
    keepLogs = true;
    throw error;
  } finally {
    await watcher?.stop();
    for (const bridge of bridges) await stopBridge(bridge);
    if (keepLogs || summary?.clean === false) {
      console.error(`bridge logs written to ${dumpBridgeLogs(bridges)}`);
    }
    await stack.stop();
  }
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const summary = await run();
  if (!summary.clean) process.exitCode = 1;
}
