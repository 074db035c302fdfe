// API-key authentication overhead: GET /api/auth/session with X-API-Key against the trivial public
// GET /api/health, on one stack, alternating the two routes to even out drift (warm-up discarded).
//
//   node bench/auth.mjs             (or `npm run bench`, which also writes bench/results/latest.json)
//   BENCH_DURATION=5 node bench/auth.mjs
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  benchDurationSeconds,
  bootStack,
  createAdminApiKey,
  DEFAULT_CONNECTIONS,
  isClean,
  measure,
  reportDirtyRun,
} from "./lib.mjs";

export const name = "auth";
export const TARGET_RATIO = 0.6;
const MEASURED_ROUNDS = 2;

function targetsFor(baseUrl, apiKey) {
  return {
    baseline: { label: "GET /api/health", url: `${baseUrl}/api/health`, headers: {} },
    auth: {
      label: "GET /api/auth/session (X-API-Key)",
      url: `${baseUrl}/api/auth/session`,
      headers: { "X-API-Key": apiKey },
    },
  };
}

/** baseline, auth, baseline, auth, ... with round 0 as the discarded warm-up. */
async function runRounds(targets, duration) {
  const runs = [];
  for (let round = 0; round <= MEASURED_ROUNDS; round++) {
    for (const route of ["baseline", "auth"]) {
      const target = targets[route];
      const phase = round === 0 ? "warm-up" : `round ${round}`;
      console.error(
        `measuring ${target.label} (${phase}, ${duration} s, ${DEFAULT_CONNECTIONS} connections)`,
      );
      const result = await measure({ url: target.url, headers: target.headers, duration });
      runs.push({ route, round, warmup: round === 0, ...result });
      if (!isClean(result)) reportDirtyRun(`${target.label} (${phase})`, result);
    }
  }
  return runs;
}

function mean(values) {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function summarise(runs, route) {
  const measured = runs.filter((run) => run.route === route && !run.warmup);
  return {
    requestsPerSec: mean(measured.map((run) => run.requestsPerSec)),
    p50: mean(measured.map((run) => run.p50)),
    p99: mean(measured.map((run) => run.p99)),
  };
}

function printTable(runs, targets) {
  const rows = runs.map((run) => ({
    route: targets[run.route].label,
    run: run.warmup ? "warm-up (discarded)" : `round ${run.round}`,
    "req/s": run.requestsPerSec.toFixed(0),
    "p50 ms": run.p50,
    "p99 ms": run.p99,
    non2xx: run.non2xx,
    errors: run.errors,
  }));
  console.table(rows);
}

/** Runs the whole benchmark on a fresh stack and returns its summary (clean: every request 2xx). */
export async function run() {
  const duration = benchDurationSeconds();
  const stack = await bootStack();
  try {
    const targets = targetsFor(stack.baseUrl, await createAdminApiKey(stack.baseUrl));
    const runs = await runRounds(targets, duration);
    const baseline = summarise(runs, "baseline");
    const auth = summarise(runs, "auth");
    const ratio = auth.requestsPerSec / baseline.requestsPerSec;
    const clean = runs.every(isClean);

    printTable(runs, targets);
    console.log(
      `baseline ${baseline.requestsPerSec.toFixed(0)} req/s, auth ${auth.requestsPerSec.toFixed(0)} req/s ` +
        `(mean of ${MEASURED_ROUNDS} rounds, ${duration} s each, ${DEFAULT_CONNECTIONS} connections)`,
    );
    console.log(
      `auth/session with API key vs trivial route: ratio ${ratio.toFixed(2)} (target >= ${TARGET_RATIO.toFixed(2)})`,
    );
    if (!clean) reportDirtyRun("auth bench (see the table above)", totals(runs));
    return {
      name,
      clean,
      ratio,
      target: TARGET_RATIO,
      meetsTarget: ratio >= TARGET_RATIO,
      durationSeconds: duration,
      connections: DEFAULT_CONNECTIONS,
      baseline,
      auth,
      runs,
    };
  } finally {
    await stack.stop();
  }
}

function totals(runs) {
  return {
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    total: runs.reduce((sum, run) => sum + run.total, 0),
  };
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const summary = await run();
  if (!summary.clean) process.exitCode = 1;
}
