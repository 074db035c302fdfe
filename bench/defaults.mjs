// The hot reads at the settings a user gets (no LOG_LEVEL, nothing tuned), against each other in one
// run:
//   GET /api/health                 the trivial route
//   GET /api/issues/:id, user key   X-API-Key of the board user (the local admin)
//   GET /api/issues/:id, agent key  Authorization: Bearer of one of the company's agents
// and, on a second stack booted beside the first with LOG_LEVEL=warn, GET /api/health again: the
// default stack's health against it is what logging at the default level costs.
// Both stacks run at once and the routes alternate, round by round (round 0 is a discarded warm-up),
// so drift and other load on the machine fall on every route alike. Issue reads walk 50 issues
// round-robin, each read once before measuring.
// Target: user-key reads >= 0.9 of agent-key reads (printed as met or NOT met, and returned as
// meetsTarget). As in the other benches, a run is clean only if every request answered 2xx.
//
//   node bench/defaults.mjs         (or `npm run bench`)
//   BENCH_DURATION=5 node bench/defaults.mjs
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createIssues, measureIssueGet, setUp } from "./control.mjs";
import {
  benchDurationSeconds,
  bootStack,
  createAdminApiKey,
  DEFAULT_CONNECTIONS,
  isClean,
  measure,
  reportDirtyRun,
} from "./lib.mjs";

export const name = "defaults";
export const TARGET_USER_AGENT_RATIO = 0.9;
const ISSUES = 50;
const MEASURED_ROUNDS = 2;

const LABELS = {
  health: "GET /api/health (default settings)",
  user: "GET /api/issues/:id, user key (default settings)",
  agent: "GET /api/issues/:id, agent key (default settings)",
  healthWarn: "GET /api/health (LOG_LEVEL=warn stack)",
};
const ROUTES = Object.keys(LABELS);

/** A company with 50 issues on the default stack, each read once with both keys. */
async function prepare(baseUrl) {
  const userKey = await createAdminApiKey(baseUrl);
  const { board, company, agents } = await setUp(baseUrl, userKey);
  const { ids } = await createIssues(baseUrl, board, company.id, ISSUES);
  if (ids.length !== ISSUES) throw new Error(`only ${ids.length} of ${ISSUES} issues created`);
  for (const headers of [board, agents[0].headers]) {
    for (const id of ids) {
      const response = await fetch(`${baseUrl}/api/issues/${id}`, { headers });
      if (response.status !== 200) throw new Error(`GET /api/issues/${id}: ${response.status}`);
      await response.body?.cancel();
    }
  }
  return { ids, user: board, agent: agents[0].headers };
}

function measureRoute(route, stacks, cast, duration) {
  if (route === "health") return measure({ url: `${stacks.defaults.baseUrl}/api/health`, duration });
  if (route === "healthWarn") return measure({ url: `${stacks.warn.baseUrl}/api/health`, duration });
  return measureIssueGet(stacks.defaults.baseUrl, cast[route], cast.ids, duration);
}

/** Every route once per round, the order rotated each round. */
async function runRounds(stacks, cast, duration) {
  const runs = [];
  for (let round = 0; round <= MEASURED_ROUNDS; round++) {
    const order = ROUTES.map((_, i) => ROUTES[(i + round) % ROUTES.length]);
    for (const route of order) {
      const phase = round === 0 ? "warm-up" : `round ${round}`;
      console.error(
        `measuring ${LABELS[route]} (${phase}, ${duration} s, ${DEFAULT_CONNECTIONS} connections)`,
      );
      const result = await measureRoute(route, stacks, cast, duration);
      runs.push({ route, round, warmup: round === 0, ...result });
      if (!isClean(result)) reportDirtyRun(`${LABELS[route]} (${phase})`, result);
    }
  }
  return runs;
}

const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;

function summarise(runs, route) {
  const measured = runs.filter((run) => run.route === route && !run.warmup);
  return {
    requestsPerSec: mean(measured.map((run) => run.requestsPerSec)),
    p50: mean(measured.map((run) => run.p50)),
    p99: mean(measured.map((run) => run.p99)),
  };
}

function printReport(runs, summary, ratios, duration) {
  console.table(
    runs.map((run) => ({
      route: LABELS[run.route],
      run: run.warmup ? "warm-up (discarded)" : `round ${run.round}`,
      "req/s": run.requestsPerSec.toFixed(0),
      "p50 ms": run.p50,
      "p99 ms": run.p99,
      non2xx: run.non2xx,
      errors: run.errors,
    })),
  );
  for (const route of ROUTES) {
    console.log(`${LABELS[route]}: ${summary[route].requestsPerSec.toFixed(0)} req/s`);
  }
  console.log(`(mean of ${MEASURED_ROUNDS} rounds, ${duration} s each, ${DEFAULT_CONNECTIONS} connections)`);
  console.log(
    `user-key reads / agent-key reads: ${ratios.userToAgent.toFixed(2)} (target >= ${TARGET_USER_AGENT_RATIO})`,
  );
  console.log(
    `user-key reads / health: ${ratios.userToHealth.toFixed(2)}; agent-key reads / health: ${ratios.agentToHealth.toFixed(2)}`,
  );
  console.log(
    `health at the default level / health at LOG_LEVEL=warn: ${ratios.healthDefaultToWarn.toFixed(2)}`,
  );
  const met = ratios.userToAgent >= TARGET_USER_AGENT_RATIO;
  console.log(
    `target (user-key reads >= ${TARGET_USER_AGENT_RATIO} of agent-key reads): ${met ? "met" : "NOT met"}`,
  );
}

/** Runs the benchmark on two fresh stacks (default settings, LOG_LEVEL=warn) and returns its summary. */
export async function run() {
  const duration = benchDurationSeconds();
  const booted = await Promise.allSettled([
    bootStack({}, { logLevel: null }),
    bootStack({}, { logLevel: "warn" }),
  ]);
  const [defaults, warn] = booted.map((result) => (result.status === "fulfilled" ? result.value : undefined));
  try {
    const failed = booted.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
    const stacks = { defaults, warn };
    const cast = await prepare(defaults.baseUrl);
    const runs = await runRounds(stacks, cast, duration);
    const summary = Object.fromEntries(ROUTES.map((route) => [route, summarise(runs, route)]));
    const ratios = {
      userToAgent: summary.user.requestsPerSec / summary.agent.requestsPerSec,
      userToHealth: summary.user.requestsPerSec / summary.health.requestsPerSec,
      agentToHealth: summary.agent.requestsPerSec / summary.health.requestsPerSec,
      healthDefaultToWarn: summary.health.requestsPerSec / summary.healthWarn.requestsPerSec,
    };
    printReport(runs, summary, ratios, duration);
    const valid = runs.every(isClean);
    const meetsTarget = ratios.userToAgent >= TARGET_USER_AGENT_RATIO;
    if (!valid) {
      reportDirtyRun("defaults bench (see the table above)", {
        non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
        errors: runs.reduce((sum, r) => sum + r.errors, 0),
        total: runs.reduce((sum, r) => sum + r.total, 0),
      });
    }
    return {
      name,
      clean: valid,
      meetsTarget,
      target: TARGET_USER_AGENT_RATIO,
      durationSeconds: duration,
      connections: DEFAULT_CONNECTIONS,
      ...summary,
      ratios,
      runs,
    };
  } finally {
    await Promise.all([defaults?.stop(), warn?.stop()]);
  }
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const summary = await run();
  if (!summary.clean) process.exitCode = 1;
}
