// Webhook fan-out: 1 connected session, 10 endpoints on a real receiver process (loopback), 1,000
// `message.received` events → 10,000 deliveries. Reports deliveries/s and p50/p99 end-to-end latency
// (from the bridge's event, i.e. the message timestamp the simulator stamps, and from the bench's
// request that produced it, to the receiver's arrival time), against direct POSTs from the bench to
// the same receiver (same count, same concurrency) in the same run. Every event must reach every
// endpoint exactly once, or the run is marked dirty.
//
//   node bench/webhooks.mjs          (or `npm run bench`)
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bootStack, createAdminApiKey } from "./lib.mjs";
import { pool, REPO_ROOT, sleep, stats } from "./support/common.mjs";
import { Api } from "./support/session-api.mjs";

export const name = "webhooks";
const ENDPOINTS = 10;
const EVENTS = 1_000;
const WARMUP_EVENTS = 20;
/** Requests in flight at once, both producing events and POSTing directly. */
const CONCURRENCY = 10;
const DELIVERY_TIMEOUT_MS = 300_000;
const SESSION = "bench-webhooks";
const PEER = "628111000222@s.whatsapp.net";
const RECEIVER = path.join(REPO_ROOT, "test", "support", "webhook-receiver.mjs");

/** Epoch ms with sub-ms precision, the clock the receiver stamps arrivals with. */
const preciseNow = () => performance.timeOrigin + performance.now();

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
  await waitFor(async () => (await api.call("GET", `/api/sessions/${id}/qr`)).status === 200, 60_000, "QR");
  await api.expect("setup", "POST", `/api/sessions/${id}/simulate/scan`);
  await waitFor(
    async () => (await api.call("GET", `/api/sessions/${id}`)).body?.data?.state === "connected",
    60_000,
    `${id} connected`,
  );
}

/** The receiver as its own process; resolves once it listens. */
function startReceiver() {
  const child = spawn(process.execPath, [RECEIVER, "0"], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let output = "";
    child.once("exit", (code) => reject(new Error(`webhook receiver exited early (code ${code})`)));
    child.stdout.on("data", (chunk) => {
      output += chunk.toString("utf8");
      const match = /\{"listening":(\d+)\}/.exec(output);
      if (!match) return;
      const base = `http://127.0.0.1:${match[1]}`;
      resolve({
        base,
        async count() {
          return (await (await fetch(`${base}/__control/count`)).json()).count;
        },
        async received() {
          return (await (await fetch(`${base}/__control/deliveries`)).json()).deliveries;
        },
        async clear() {
          await fetch(`${base}/__control/deliveries`, { method: "DELETE" });
        },
        async stop() {
          child.removeAllListeners("exit");
          if (child.exitCode !== null) return;
          const exited = new Promise((done) => child.once("exit", done));
          child.kill("SIGTERM");
          await exited;
        },
      });
    });
  });
}

/** Produces `ids.length` received messages through the simulator; returns id → time requested. */
async function produce(api, ids) {
  const producedAt = new Map();
  await pool(ids, CONCURRENCY, async (id, index) => {
    producedAt.set(id, preciseNow());
    await api.expect("produce", "POST", `/api/sessions/${SESSION}/simulate/world`, {
      action: "receive",
      from: PEER,
      id,
      content: { type: "text", text: `bench event ${index}` },
    });
  });
  return producedAt;
}

async function waitForCount(receiver, count, what) {
  const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
  while ((await receiver.count()) < count) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${await receiver.count()})`);
    await sleep(50);
  }
}

/** Every (endpoint, event) pair once: what is missing, what came more than once, latencies. */
function analyse(entries, producedAt, paths) {
  const seen = new Map(paths.map((p) => [p, new Map()]));
  const fromBridge = [];
  const fromRequest = [];
  let lastArrival = 0;
  let foreign = 0;
  const messageIds = new Set();
  for (const entry of entries) {
    const payload = JSON.parse(entry.body);
    const id = payload.data?.id;
    const perPath = seen.get(entry.path);
    if (!perPath || !producedAt.has(id)) {
      foreign++;
      continue;
    }
    perPath.set(id, (perPath.get(id) ?? 0) + 1);
    messageIds.add(entry.headers["webhook-id"]);
    if (perPath.get(id) > 1) continue;
    fromBridge.push(entry.receivedAt - Date.parse(payload.data.timestamp));
    fromRequest.push(entry.receivedAt - producedAt.get(id));
    lastArrival = Math.max(lastArrival, entry.receivedAt);
  }
  let missing = 0;
  let duplicated = 0;
  for (const perPath of seen.values()) {
    for (const id of producedAt.keys()) {
      const n = perPath.get(id) ?? 0;
      if (n === 0) missing++;
      if (n > 1) duplicated += n - 1;
    }
  }
  return {
    missing,
    duplicated,
    foreign,
    lastArrival,
    messageIds,
    fromBridge: stats(fromBridge),
    fromRequest: stats(fromRequest),
  };
}

/** The baseline: the bench POSTs the same number of signed-size bodies straight to the receiver. */
async function direct(receiver, sample, count) {
  const sent = new Map();
  const failures = [];
  const jobs = Array.from({ length: count }, (_, i) => i);
  const started = preciseNow();
  await pool(jobs, CONCURRENCY, async (i) => {
    const id = `direct-${i}`;
    const body = sample.body.replace(/"id":"[^"]*"/, `"id":"${id}"`);
    sent.set(id, preciseNow());
    try {
      const response = await fetch(`${receiver.base}/direct-${i % ENDPOINTS}`, {
        method: "POST",
        headers: { ...pick(sample.headers), "content-type": "application/json" },
        body,
      });
      await response.arrayBuffer();
      if (response.status !== 200) failures.push(response.status);
    } catch (error) {
      failures.push(String(error));
    }
  });
  const finished = preciseNow();
  const entries = (await receiver.received()).filter((e) => e.path.startsWith("/direct-"));
  const latencies = entries.map((e) => e.receivedAt - sent.get(JSON.parse(e.body).data.id));
  return {
    perSec: count / ((finished - started) / 1000),
    latency: stats(latencies),
    received: entries.length,
    failures: failures.length,
  };
}

/**
 * What the deliveries log says about the measured events: attempts made and the engine's own timing of
 * each POST, which separates the time spent waiting on the receiver from the time spent around it.
 */
async function engineLog(api, webhookIds, measured) {
  const latencies = [];
  let attempts = 0;
  let notDelivered = 0;
  for (const webhookId of webhookIds) {
    for (let offset = 0; ; offset += 200) {
      const page = await api.expect(
        "log",
        "GET",
        `/api/webhooks/${SESSION}/${webhookId}/deliveries?limit=200&offset=${offset}`,
      );
      const rows = page.body?.data ?? [];
      for (const row of rows) {
        if (!measured.has(row.messageId)) continue;
        attempts += row.attempts;
        if (row.status !== "delivered") notDelivered++;
        if (typeof row.latencyMs === "number") latencies.push(row.latencyMs);
      }
      if (rows.length < 200) break;
    }
  }
  return { attempts, notDelivered, postLatency: stats(latencies) };
}

const pick = (headers) =>
  Object.fromEntries(Object.entries(headers).filter(([key]) => /^(webhook-|x-webhook-signature)/i.test(key)));

function report({ deliveriesPerSec, fanout, baseline, logged, throughputRatio, latencyRatios }) {
  console.table([
    {
      path: `webhook fan-out: 1 session → ${ENDPOINTS} endpoints`,
      "per s": fixed(deliveriesPerSec, 0),
      "p50 ms (bridge event→receiver)": fixed(fanout.fromBridge.p50),
      "p99 ms (bridge event→receiver)": fixed(fanout.fromBridge.p99),
      "p50 ms (bench request→receiver)": fixed(fanout.fromRequest.p50),
      "p99 ms (bench request→receiver)": fixed(fanout.fromRequest.p99),
      missing: fanout.missing,
      duplicated: fanout.duplicated,
    },
    {
      path: "direct POST bench → receiver (baseline)",
      "per s": fixed(baseline.perSec, 0),
      "p50 ms (bench request→receiver)": fixed(baseline.latency.p50),
      "p99 ms (bench request→receiver)": fixed(baseline.latency.p99),
      missing: EVENTS * ENDPOINTS - baseline.received,
      duplicated: 0,
    },
  ]);
  console.log(
    `webhooks: ${fixed(deliveriesPerSec, 0)} deliveries/s = ${fixed(throughputRatio, 3)}× direct POSTs/s; ` +
      `latency (bridge event→receiver ÷ direct POST) p50 ${fixed(latencyRatios.p50)}×, ` +
      `p99 ${fixed(latencyRatios.p99)}×; ${fanout.missing} missing, ${fanout.duplicated} duplicated`,
  );
  console.log(
    `engine: ${logged.attempts} attempts for ${EVENTS * ENDPOINTS} deliveries, ${logged.notDelivered} not ` +
      `delivered; each POST as the engine timed it p50 ${fixed(logged.postLatency.p50)} ms, ` +
      `p99 ${fixed(logged.postLatency.p99)} ms`,
  );
}

const fixed = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");

export async function run() {
  const stack = await bootStack({ SIMULATOR: "1", WEBHOOK_ALLOWED_HOSTS: "127.0.0.1" });
  const receiver = await startReceiver();
  try {
    const api = new Api(stack.baseUrl, await createAdminApiKey(stack.baseUrl));
    console.error(`connecting ${SESSION} on the simulator`);
    await connect(api, SESSION);
    const paths = Array.from({ length: ENDPOINTS }, (_, i) => `/endpoint-${i}`);
    const webhookIds = [];
    for (const [i, target] of paths.entries()) {
      const created = await api.expect("setup", "POST", `/api/webhooks/${SESSION}`, {
        name: `endpoint ${i}`,
        url: `${receiver.base}${target}`,
        events: ["message.received"],
      });
      webhookIds.push(created.body?.data?.id);
    }
    if (api.failures.length > 0) throw new Error(`setup failed: ${JSON.stringify(api.failures.slice(0, 3))}`);

    console.error(`warm-up: ${WARMUP_EVENTS} events (discarded)`);
    const tag = Date.now().toString(36).toUpperCase();
    const warmIds = Array.from({ length: WARMUP_EVENTS }, (_, i) => `WARM${tag}${i}`);
    await produce(api, warmIds);
    await waitForCount(receiver, WARMUP_EVENTS * ENDPOINTS, "warm-up deliveries");
    const [sample] = await receiver.received();
    await sleep(1_000);
    await receiver.clear();

    console.error(`measuring: ${EVENTS} events × ${ENDPOINTS} endpoints (${CONCURRENCY} producing at once)`);
    const ids = Array.from({ length: EVENTS }, (_, i) => `BENCH${tag}${i}`);
    const started = preciseNow();
    const producedAt = await produce(api, ids);
    const produced = preciseNow();
    await waitForCount(receiver, EVENTS * ENDPOINTS, "every delivery");
    await sleep(2_000); // late duplicates, if any, would land here
    const fanout = analyse(await receiver.received(), producedAt, paths);
    const deliveriesPerSec = (EVENTS * ENDPOINTS) / ((fanout.lastArrival - started) / 1000);
    const logged = await engineLog(api, webhookIds, fanout.messageIds);

    console.error(`measuring: ${EVENTS * ENDPOINTS} direct POSTs to the same receiver`);
    await receiver.clear();
    const baseline = await direct(receiver, sample, EVENTS * ENDPOINTS);

    const clean =
      api.failures.length === 0 &&
      fanout.missing === 0 &&
      fanout.duplicated === 0 &&
      logged.notDelivered === 0 &&
      baseline.failures === 0 &&
      baseline.received === EVENTS * ENDPOINTS;
    const throughputRatio = deliveriesPerSec / baseline.perSec;
    const latencyRatios = {
      p50: fanout.fromBridge.p50 / baseline.latency.p50,
      p99: fanout.fromBridge.p99 / baseline.latency.p99,
    };
    report({ deliveriesPerSec, fanout, baseline, logged, throughputRatio, latencyRatios });
    console.log(`events produced in ${fixed((produced - started) / 1000, 2)} s`);
    if (!clean) {
      const line = "!".repeat(78);
      console.error(
        `\n${line}\n!! webhooks bench: ${fanout.missing} missing and ${fanout.duplicated} duplicated deliveries, ` +
          `${logged.notDelivered} not logged as delivered, ${api.failures.length} failed API calls, ` +
          `${baseline.failures} failed direct POSTs.\n` +
          `!! This benchmark did NOT measure what it claims to; its numbers are invalid.\n${line}\n`,
      );
    }
    return {
      name,
      clean,
      endpoints: ENDPOINTS,
      events: EVENTS,
      concurrency: CONCURRENCY,
      deliveriesPerSec,
      directPostsPerSec: baseline.perSec,
      throughputRatio,
      latencyFromBridgeEvent: fanout.fromBridge,
      latencyFromRequest: fanout.fromRequest,
      directLatency: baseline.latency,
      latencyRatios,
      missing: fanout.missing,
      duplicated: fanout.duplicated,
      engine: logged,
      apiFailures: api.failures.slice(0, 5),
    };
  } finally {
    await receiver.stop();
    await stack.stop();
  }
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const summary = await run();
  if (!summary.clean) process.exitCode = 1;
}
