// Real-Baileys sessions per bridge: N sessions of the real bridge (`bridge/src/main.ts`, Baileys
// 7.0.0-rc14, in its own process) linked by QR to the protocol-level fake WhatsApp (test/fake-whatsapp),
// the bridge dialling a fake edge (test/bridge/support/fake-edge.ts). The fakes run in a driver process
// (support/wa-scale.ts, one per N) and the bridge in a child of it (support/wa-bridge.ts), so the
// bridge's resident memory holds its sessions and nothing of the fakes or of this runner.
//
//   BENCH_WA_SESSIONS=50,200 node bench/wa-sessions.mjs   (or with `npm run bench`)
//
// Without BENCH_WA_SESSIONS, `npm run bench` runs only N = 10 (about half a minute) and says so: the
// figures that matter come from setting it (N = 50 takes about a minute, N = 200 a few minutes).
// Measured, for each N:
// - bridge VmRSS (after a full GC in the bridge: `--expose-gc`, asked over IPC) with 0 sessions, after
//   all N are paired (QR scanned by a fake phone, 515 restart, `connected`; 8 linked at a time), and
//   after a 1,000-message inbound burst SPREAD over the sessions (1000/N each, one fake contact per
//   session, each contact sending in order, all contacts at once), each 3 s after the phase ended;
//   reported per session as (RSS - RSS with 0 sessions) / N;
// - the burst's delivery time: first send until the fake edge stored all 1,000 `message` events;
// - reconnect: the fake WhatsApp restarts (every connection dropped, the port closed for 1 s, then the
//   same keys, accounts and devices on the same port); time from the drop until every session reported
//   `connected` again, with no QR, under the bridge's own reconnect backoff (1 s base, doubling).
// Ratios compare the largest N with the smallest: memory per session, and reconnect time per session.
// Clean: every N finished, the whole burst arrived in time, no bridge error log lines, no protocol
// errors, no session asked for a QR again. A burst the bridge cannot absorb in time (the driver waits
// 120 s + 200 ms per message) is reported with what did arrive and Baileys' keep-alive timeouts (408).
// Knobs (support/wa-scale.ts): BENCH_WA_BURST (messages, 1000), BENCH_WA_PAIR_CONCURRENCY (8),
// BENCH_WA_DOWN_MS (1000), BENCH_WA_SETTLE_MS (3000), BENCH_WA_BURST_TIMEOUT_MS.
// Figures measured on the 2-core machine: docs/operations.md, "Sessions per bridge".
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { REPO_ROOT } from "./support/common.mjs";

export const name = "wa-sessions";

const DEFAULT_SESSIONS = [10];
const MIB = 2 ** 20;

function sessionCounts() {
  const raw = process.env.BENCH_WA_SESSIONS;
  if (!raw) return { counts: DEFAULT_SESSIONS, chosen: false };
  const counts = raw.split(",").map((part) => Number(part.trim()));
  if (counts.length === 0 || counts.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(`BENCH_WA_SESSIONS must be a comma-separated list of positive integers, got ${raw}`);
  }
  return { counts: [...new Set(counts)].sort((a, b) => a - b), chosen: true };
}

/** One driver process for `sessions`; resolves with its WA_SCALE_RESULT, rejects on failure. */
function runDriver(sessions) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join("bench", "support", "wa-scale.ts"), String(sessions)],
      { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk.toString("utf8");
    });
    child.once("close", (code) => {
      const line = out.split("\n").find((candidate) => candidate.startsWith("WA_SCALE_RESULT "));
      if (code === 0 && line) resolve(JSON.parse(line.slice("WA_SCALE_RESULT ".length)));
      else reject(new Error(`wa-scale.ts ${sessions} exited ${code}${line ? "" : " without a result"}`));
    });
  });
}

/** The per-session figures of one run. */
function perSession(run) {
  const { idle, paired, afterBurst, reconnected } = run.memory;
  const n = run.sessions;
  return {
    sessions: n,
    rssIdleMiB: idle.rssBytes / MIB,
    rssPairedMiB: paired.rssBytes / MIB,
    rssAfterBurstMiB: afterBurst.rssBytes / MIB,
    rssPerSessionPairedMiB: (paired.rssBytes - idle.rssBytes) / n / MIB,
    rssPerSessionAfterBurstMiB: (afterBurst.rssBytes - idle.rssBytes) / n / MIB,
    heapPerSessionPairedMiB: (paired.heapUsedBytes - idle.heapUsedBytes) / n / MIB,
    heapPerSessionAfterBurstMiB: (afterBurst.heapUsedBytes - idle.heapUsedBytes) / n / MIB,
    rssPerSessionReconnectedMiB: (reconnected.rssBytes - idle.rssBytes) / n / MIB,
    offlineWaitingAtRestart: run.reconnect.offlineWaiting,
    memory: run.memory,
    pairSeconds: run.pairMs / 1000,
    // The bridge process's CPU time in each phase (settle time included): what the 2 cores spent on it.
    bridgeCpuPerSessionPairingMs: ((paired.cpuSeconds - idle.cpuSeconds) * 1000) / n,
    bridgeCpuPerBurstMessageMs: ((afterBurst.cpuSeconds - paired.cpuSeconds) * 1000) / run.burstMessages,
    bridgeCpuPerSessionReconnectMs: ((reconnected.cpuSeconds - afterBurst.cpuSeconds) * 1000) / n,
    burstMessages: run.burstMessages,
    // null: not all of the burst arrived within the driver's wait (`burstDelivered` did).
    burstDeliveredMs: run.burst.deliveredMs,
    burstDelivered: run.burst.delivered,
    burstMessagesPerSecond: run.burst.delivered / (run.burst.waitedMs / 1000),
    keepAliveTimeouts: run.connectionLost,
    reconnectAllMs: run.reconnect.allMs,
    reconnectP50Ms: run.reconnect.p50Ms,
    reconnectFirstMs: run.reconnect.firstMs,
    // null: not every session was back within the driver's wait (`reconnected` were).
    reconnected: run.reconnect.reconnected,
    reconnectPerSessionMs: run.reconnect.allMs === null ? null : run.reconnect.allMs / n,
    downMs: run.downMs,
    extraQrs: run.reconnect.extraQrs,
    bridgeErrors: run.bridgeErrors,
    protocolErrors: run.protocolErrors,
  };
}

const f1 = (value) => (value === null ? "n/a" : value.toFixed(1));
const f2 = (value) => (value === null ? "n/a" : value.toFixed(2));
/** A ratio of two figures, null when either is missing (a phase that did not finish). */
const ratio = (a, b) => (a === null || b === null ? null : a / b);

function printRow(row) {
  console.log(
    `N=${row.sessions}: RSS ${f1(row.rssIdleMiB)} MiB idle -> ${f1(row.rssPairedMiB)} paired -> ` +
      `${f1(row.rssAfterBurstMiB)} after burst; per session ${f2(row.rssPerSessionPairedMiB)} MiB paired, ` +
      `${f2(row.rssPerSessionAfterBurstMiB)} MiB after burst, ${f2(row.rssPerSessionReconnectedMiB)} after ` +
      `reconnect (live JS heap ${f2(row.heapPerSessionPairedMiB)} / ${f2(row.heapPerSessionAfterBurstMiB)} MiB)`,
  );
  console.log(
    `      paired in ${f1(row.pairSeconds)} s; burst: ${row.burstDelivered}/${row.burstMessages} delivered ` +
      `${row.burstDeliveredMs === null ? "by the deadline" : `in ${row.burstDeliveredMs} ms`} ` +
      `(${f1(row.burstMessagesPerSecond)} msg/s; ${row.keepAliveTimeouts} keep-alive timeouts); ` +
      `all reconnected ${row.reconnectAllMs ?? "n/a"} ms after the drop (${row.reconnected}/${row.sessions} ` +
      `back; port down ${row.downMs} ms; first ${row.reconnectFirstMs}, ` +
      `p50 ${row.reconnectP50Ms}; ${f1(row.reconnectPerSessionMs)} ms per session; ` +
      `${row.offlineWaitingAtRestart} stanzas queued for redelivery)`,
  );
  console.log(
    `      bridge CPU: ${f1(row.bridgeCpuPerSessionPairingMs)} ms per session paired, ` +
      `${f2(row.bridgeCpuPerBurstMessageMs)} ms per burst message, ` +
      `${f1(row.bridgeCpuPerSessionReconnectMs)} ms per session reconnected`,
  );
}

export async function run() {
  const { counts, chosen } = sessionCounts();
  if (!chosen) {
    console.log(
      `BENCH_WA_SESSIONS not set: running N = ${counts.join(",")} only (a smoke run); ` +
        "set e.g. BENCH_WA_SESSIONS=50,200 for the figures",
    );
  }
  const rows = [];
  const failures = [];
  for (const sessions of counts) {
    try {
      const row = perSession(await runDriver(sessions));
      rows.push(row);
      printRow(row);
    } catch (error) {
      failures.push({ sessions, error: error instanceof Error ? error.message : String(error) });
      console.error(`N=${sessions} failed: ${failures.at(-1).error}`);
    }
  }
  const [smallest, largest] = [rows[0], rows.at(-1)];
  const ratios =
    smallest && largest && largest !== smallest
      ? {
          between: `N=${largest.sessions} / N=${smallest.sessions}`,
          rssPerSessionPaired: largest.rssPerSessionPairedMiB / smallest.rssPerSessionPairedMiB,
          rssPerSessionAfterBurst: largest.rssPerSessionAfterBurstMiB / smallest.rssPerSessionAfterBurstMiB,
          reconnectAll: ratio(largest.reconnectAllMs, smallest.reconnectAllMs),
          reconnectPerSession: ratio(largest.reconnectPerSessionMs, smallest.reconnectPerSessionMs),
        }
      : null;
  if (ratios) {
    console.log(
      `${ratios.between}: memory per session x${f2(ratios.rssPerSessionPaired)} paired, ` +
        `x${f2(ratios.rssPerSessionAfterBurst)} after burst; reconnect of all x${f2(ratios.reconnectAll)}, ` +
        `per session x${f2(ratios.reconnectPerSession)}`,
    );
  }
  const clean =
    failures.length === 0 &&
    rows.every(
      (row) =>
        row.burstDeliveredMs !== null &&
        row.reconnectAllMs !== null &&
        row.bridgeErrors === 0 &&
        row.protocolErrors === 0 &&
        row.extraQrs === 0,
    );
  return { clean, smokeOnly: !chosen, burst: "spread over the sessions", runs: rows, ratios, failures };
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const summary = await run();
  console.log(JSON.stringify(summary, null, 2));
  if (!summary.clean) process.exitCode = 1;
}
