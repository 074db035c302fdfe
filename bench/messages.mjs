// The send path: POST /api/messages/{sessionId}/{jid}/send → SessionDO → bridge → simulated peer, for
// one session and for 100 sessions in parallel, against the trivial GET /api/health on the same stack
// in the same run. Reports messages/s, p50/p99 and the ratio send/trivial (target: the send path costs
// at most 3× a trivial route, i.e. ratio ≥ 0.33). Every measured send must answer 200 and reach the
// simulated peer, or the run is marked dirty.
//
//   node bench/messages.mjs          (or `npm run bench`)
//   BENCH_DURATION=5 node bench/messages.mjs
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import {
  benchDurationSeconds,
  bootStack,
  createAdminApiKey,
  DEFAULT_CONNECTIONS,
  isClean,
  measure,
  reportDirtyRun,
} from "./lib.mjs";
import { pool, sleep } from "./support/common.mjs";
import { Api } from "./support/session-api.mjs";

export const name = "messages";
export const TARGET_RATIO = 1 / 3;
const PARALLEL_SESSIONS = 100;
const PEER = "628111000111@s.whatsapp.net";

async function waitFor(probe, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** create → start → QR → simulated scan → connected, as a user would. */
async function connect(api, id) {
  await api.expect("setup", "POST", "/api/sessions", { name: id, sessionId: id });
  await api.expect("setup", "POST", `/api/sessions/${id}/start`);
  await waitFor(
    async () => (await api.call("GET", `/api/sessions/${id}/qr`)).status === 200,
    60_000,
    `${id} QR`,
  );
  await api.expect("setup", "POST", `/api/sessions/${id}/simulate/scan`);
  await waitFor(
    async () => (await api.call("GET", `/api/sessions/${id}`)).body?.data?.state === "connected",
    60_000,
    `${id} connected`,
  );
}

/** Loads the send route, spreading the connections' requests over `sessions` round-robin. */
async function measureSend(baseUrl, key, sessions, connections, duration) {
  let next = 0;
  const body = JSON.stringify({ message: { text: "benchmark message" } });
  const result = await autocannon({
    url: baseUrl,
    connections,
    duration,
    requests: [
      {
        method: "POST",
        headers: { "X-API-Key": key, "content-type": "application/json" },
        body,
        setupRequest: (request) => {
          const session = sessions[next++ % sessions.length];
          return { ...request, path: `/api/messages/${session}/${encodeURIComponent(PEER)}/send` };
        },
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

/** Every 200 must have reached the peer: the simulated inbox of each session counts them. */
async function delivered(api, sessions) {
  let total = 0;
  for (const id of sessions) {
    const stats = await api.call("POST", `/api/sessions/${id}/simulate/world`, { action: "stats" });
    total += stats.body?.data?.inbox ?? 0;
  }
  return total;
}

function row(label, run, baseline) {
  return {
    route: label,
    "req/s": run.requestsPerSec.toFixed(0),
    "p50 ms": run.p50,
    "p99 ms": run.p99,
    "ratio vs trivial": baseline ? (run.requestsPerSec / baseline.requestsPerSec).toFixed(2) : "1.00",
    non2xx: run.non2xx,
    errors: run.errors,
  };
}

export async function run() {
  const duration = benchDurationSeconds();
  const stack = await bootStack({ SIMULATOR: "1" });
  try {
    const key = await createAdminApiKey(stack.baseUrl);
    const api = new Api(stack.baseUrl, key);
    const sessions = Array.from({ length: PARALLEL_SESSIONS }, (_, i) => `bench-${i}`);
    console.error(`connecting ${sessions.length} sessions on the simulator`);
    await pool(sessions, 20, (id) => connect(api, id));
    if (api.failures.length > 0) throw new Error(`setup failed: ${JSON.stringify(api.failures.slice(0, 3))}`);

    const health = `${stack.baseUrl}/api/health`;
    console.error("warm-up (discarded)");
    await measure({ url: health, duration: 2 });
    await measureSend(stack.baseUrl, key, sessions.slice(0, 1), DEFAULT_CONNECTIONS, 2);
    const warmupDelivered = await delivered(api, sessions);

    console.error(`measuring GET /api/health (${duration} s, ${DEFAULT_CONNECTIONS} connections)`);
    const baseline = await measure({ url: health, duration });
    console.error(`measuring GET /api/health (${duration} s, ${PARALLEL_SESSIONS} connections)`);
    const baselineWide = await measure({ url: health, connections: PARALLEL_SESSIONS, duration });
    console.error(`measuring send, 1 session (${duration} s, ${DEFAULT_CONNECTIONS} connections)`);
    const single = await measureSend(stack.baseUrl, key, sessions.slice(0, 1), DEFAULT_CONNECTIONS, duration);
    console.error(
      `measuring send, ${PARALLEL_SESSIONS} sessions (${duration} s, ${PARALLEL_SESSIONS} connections)`,
    );
    const parallel = await measureSend(stack.baseUrl, key, sessions, PARALLEL_SESSIONS, duration);

    const reached = (await delivered(api, sessions)) - warmupDelivered;
    const answered = single.total - single.non2xx + (parallel.total - parallel.non2xx);
    const runs = [baseline, baselineWide, single, parallel];
    // Sends still in flight when a run stops reach the peer but are not counted as answered.
    const clean = runs.every(isClean) && reached >= answered;
    console.table([
      row(`GET /api/health (trivial), ${DEFAULT_CONNECTIONS} connections`, baseline, null),
      row(`GET /api/health (trivial), ${PARALLEL_SESSIONS} connections`, baselineWide, null),
      row(`POST …/send, 1 session, ${DEFAULT_CONNECTIONS} connections`, single, baseline),
      row(
        `POST …/send, ${PARALLEL_SESSIONS} sessions, ${PARALLEL_SESSIONS} connections`,
        parallel,
        baselineWide,
      ),
    ]);
    const ratio1 = single.requestsPerSec / baseline.requestsPerSec;
    const ratio100 = parallel.requestsPerSec / baselineWide.requestsPerSec;
    console.log(
      `send vs trivial: 1 session ${ratio1.toFixed(2)}, ${PARALLEL_SESSIONS} sessions ${ratio100.toFixed(2)} ` +
        `(target >= ${TARGET_RATIO.toFixed(2)}, i.e. a send costs at most 3x a trivial route); ` +
        `${reached} of ${answered} answered sends reached the simulated peer`,
    );
    if (!clean)
      reportDirtyRun("messages bench", {
        non2xx: single.non2xx + parallel.non2xx,
        errors: single.errors + parallel.errors,
        total: answered,
      });
    return {
      name,
      clean,
      target: TARGET_RATIO,
      ratioOneSession: ratio1,
      ratioParallel: ratio100,
      meetsTarget: ratio1 >= TARGET_RATIO && ratio100 >= TARGET_RATIO,
      durationSeconds: duration,
      baseline,
      baselineWide,
      single,
      parallel,
      delivered: reached,
      answered,
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
