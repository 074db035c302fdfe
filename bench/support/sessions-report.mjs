// The human-readable report of bench/sessions.mjs: latency tables (also as multiples of the trivial
// route's p50), bridge memory, and the verdict on the sessions-per-bridge target.
import { ms, times } from "./common.mjs";
import { POLL_INTERVAL_MS } from "./session-api.mjs";

/** The target the verdict is about: one bridge process holding this many connected sessions. */
export const TARGET_SESSIONS_PER_BRIDGE = 1000;

export function printReport(summary) {
  const base = summary.baseline.p50;
  console.log(
    `\nbaseline: GET /api/health p50 ${ms(base)}, p99 ${ms(summary.baseline.p99)} ` +
      `(${summary.baseline.requests} sequential requests, ${summary.baseline.non2xx} non-2xx)`,
  );
  console.log('\nwarm start (linked before, creds stored): POST .../start -> listed "connected"');
  console.table(
    [...summary.warm, ...(summary.singleBridge?.warm ? [summary.singleBridge.warm] : [])].map((run) => ({
      bridges: run.bridges,
      sessions: run.sessions,
      connected: run.connected,
      "p50 ms": run.p50.toFixed(1),
      "p99 ms": run.p99.toFixed(1),
      "max ms": run.max.toFixed(1),
      "p50 × health": times(run.p50, base),
      "p99 × health": times(run.p99, base),
      "wall ms": run.wallMs.toFixed(0),
      "sessions/s": run.sessionsPerSec.toFixed(1),
      "listing p50 ms": run.listingPolls.p50.toFixed(0),
      split: Object.entries(run.split)
        .map(([id, n]) => `${id}:${n}`)
        .join(" "),
    })),
  );
  for (const run of summary.warm) {
    console.log(
      `start-to-connected p50 at N=${run.sessions} = ${ms(run.p50)} = ${times(run.p50, base)} × the trivial route's p50`,
    );
  }
  if (summary.cold.length) {
    console.log('\ncold path: create + start -> QR -> simulated scan -> listed "connected"');
    console.table(
      summary.cold.map((run) => ({
        sessions: run.sessions,
        connected: run.connected,
        "to QR p50 ms": run.toQr.p50.toFixed(1),
        "to QR p99 ms": run.toQr.p99.toFixed(1),
        "connected p50 ms": run.toConnected.p50.toFixed(1),
        "connected p99 ms": run.toConnected.p99.toFixed(1),
        "p50 × health": times(run.toConnected.p50, base),
        "p99 × health": times(run.toConnected.p99, base),
        "wall ms": run.wallMs.toFixed(0),
      })),
    );
    for (const run of summary.cold) {
      console.log(
        `cold create-to-connected p50 at N=${run.sessions} = ${ms(run.toConnected.p50)} = ` +
          `${times(run.toConnected.p50, base)} × the trivial route's p50`,
      );
    }
  }
  const memoryRows = [
    ...(summary.memory ?? []).map((row) => ({ variant: "two bridges", ...row })),
    ...(summary.singleBridge?.memory ?? []).map((row) => ({ variant: "one bridge", ...row })),
  ];
  if (memoryRows.length) {
    console.log("\nbridge resident memory (VmRSS of the bridge's node process)");
    console.table(
      memoryRows.map((row) => ({
        variant: row.variant,
        bridge: row.bridge,
        "RSS before MiB": (row.rssBeforeKib / 1024).toFixed(1),
        "RSS after MiB": (row.rssAfterKib / 1024).toFixed(1),
        "connected sessions": row.sessions,
        "KiB / session": Number.isFinite(row.kibPerSession) ? row.kibPerSession.toFixed(1) : "n/a",
      })),
    );
  }
  if (summary.memory) {
    console.log(
      "two bridges: RSS before = just after joining; after = the largest N connected, so the delta also holds\n" +
        "whatever the process kept from the earlier phases (cold path, setup, QR rendering). one bridge: a fresh\n" +
        "process that only ever did the warm start (no GC forced in either case).",
    );
  }
  for (const run of [...summary.warm, ...(summary.singleBridge?.warm ? [summary.singleBridge.warm] : [])]) {
    if (run.stuck || run.problems.length) {
      console.log(
        `warm start of ${run.sessions} on ${run.bridges} bridge(s): ${run.stuck} never listed "connected" ` +
          `(last listed states ${JSON.stringify(run.stuckStates)}, e.g. ${run.stuckExamples.join(", ")}); ` +
          `bridge warnings/errors: ${JSON.stringify(run.problems.slice(0, 5))}`,
      );
    }
  }
  for (const run of summary.cold) {
    if (run.failed.length) console.log(`cold path of ${run.sessions}: failed ${JSON.stringify(run.failed)}`);
  }
  console.log(
    `\nlisting polls: ${summary.polls.count}, GET /api/sessions p50 ${ms(summary.polls.p50)}, ` +
      `max ${ms(summary.polls.max)}. Latencies above are upper bounds: the arrival of the first listing that\n` +
      `showed the state; one poll in flight, at most every ${POLL_INTERVAL_MS} ms, so the resolution is about the\n` +
      "listing's own latency (column 'listing p50 ms').",
  );
  for (const stop of summary.stops) {
    if (stop.notStopped || stop.notReleased) {
      console.log(
        `stop of ${stop.sessions}: ${stop.notStopped} never listed "stopped", ${stop.notReleased} not let go by a bridge`,
      );
    }
  }
  for (const shutdown of summary.bridgeShutdowns) {
    console.log(
      `bridge ${shutdown.bridge} shut down in ${ms(shutdown.stopMs)}, exit ${JSON.stringify(shutdown.exit)}` +
        `${shutdown.loggedStopped ? "" : ' (never logged "bridge stopped")'}`,
    );
  }
  if (summary.failures.length) {
    console.error(`\n${summary.failures.length} unexpected HTTP answers; first ones:`);
    console.error(summary.failures.slice(0, 10));
  }
  console.log(`\n${summary.target.line}`);
  console.log(`  ${summary.target.detail}`);
}

export function targetVerdict(summary, largest) {
  const single = summary.singleBridge;
  if (single?.warm) {
    const run = single.warm;
    const met = run.sessions >= TARGET_SESSIONS_PER_BRIDGE && run.connected === run.sessions && run.bridgesUp;
    return {
      met,
      line: `target: >= ${TARGET_SESSIONS_PER_BRIDGE} sessions per bridge process — ${met ? "met" : "not met"}`,
      detail:
        `one bridge process (${single.bridge}) held ${run.connected}/${run.sessions} connected sessions` +
        `, process ${run.bridgesUp ? "stayed up" : "EXITED"}; two bridges held ` +
        `${largest ? `${largest.connected}/${largest.sessions} (${JSON.stringify(largest.split)})` : "n/a"}`,
    };
  }
  const met = false;
  return {
    met,
    line: `target: >= ${TARGET_SESSIONS_PER_BRIDGE} sessions per bridge process — not met (not measured)`,
    detail:
      `the single-bridge variant did not run (${single?.skipped ?? "no sessions"}); two bridges held ` +
      `${largest ? `${largest.connected}/${largest.sessions} (${JSON.stringify(largest.split)})` : "n/a"}, ` +
      "so no single process was shown to hold the target",
  };
}
