// The agent runner's own overhead, in this process (no stack needed), each against a baseline
// measured the same way in the same run:
//   (a) wake → CLI process start, p50 and p99: from a run frame sent by a fake edge over a loopback
//       WebSocket to the real AgentRunner until its child is spawned, against a bare
//       child_process.spawn of `true`. The `process` adapter running `true`, twice: in the agent's
//       own directory, and on an issue whose project workspace is a git repository (the issue's
//       worktree exists after the first run, so this is the steady cost of finding it). Then each CLI
//       adapter (claude_local, codex_local, gemini_local, opencode_local) with what a real agent's
//       run carries (instructions, the platform's protocol and skill), so its launch preparation
//       counts, its CLI a stub printing the real CLI's captured output (support/runner-spawn.mjs);
//   (b) parse cost per 1,000 stream events, for each CLI adapter's stream parser
//       (bridge/src/runner/adapters/*-stream.ts) over 1,000 lines of that CLI's output (the real
//       CLI's, repeated: support/runner-streams.mjs), against JSON.parse of the same 1,000 lines.
// Results are ratios to the baselines, never timed assertions. A run is clean when every run
// spawned and exited 0 and every parser read its stream to the closing result.
//
//   node bench/runner.mjs          (or `npm run bench`)
//   BENCH_RUNNER_SPAWNS=50 BENCH_PARSE_ROUNDS=50 node bench/runner.mjs
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { tsImport } from "tsx/esm/api";
import { now, stats } from "./support/common.mjs";
import { cliRun, gitRepository, processRun, runnerSpawns } from "./support/runner-spawn.mjs";
import { STREAM_LINES, STREAMS } from "./support/runner-streams.mjs";

export const name = "runner";

const positive = (value, fallback) => (Number(value) > 0 ? Math.floor(Number(value)) : fallback);
const SPAWNS = positive(process.env.BENCH_RUNNER_SPAWNS, 200);
const PARSE_ROUNDS = positive(process.env.BENCH_PARSE_ROUNDS, 200);
/** Discarded before each measurement: JIT warm-up, and the worktree's creation in variant two. */
const WARMUP = 10;

/** The CLI adapters of (a), each after the two `process` variants. */
const CLI_ADAPTERS = ["claude_local", "codex_local", "gemini_local", "opencode_local"];

const METER = {
  provider: "bench",
  model: "bench-model",
  prices: { input: 1.25, cachedInput: 0.125, output: 10 },
  before: { input: 0, cached: 0, output: 0 },
};

/** Samples after the warm-up, with the interleaved baseline's and their ratios. */
function spawnStats({ samples, bare, failed }) {
  const runner = stats(samples.slice(WARMUP));
  const baseline = stats(bare.slice(WARMUP));
  return {
    ...runner,
    failed,
    baseline,
    p50Ratio: runner.p50 / baseline.p50,
    p99Ratio: runner.p99 / baseline.p99,
  };
}

async function wakeToSpawn() {
  const dir = await mkdtemp(path.join(tmpdir(), "switchboard-bench-repo-"));
  try {
    const plain = await runnerSpawns(WARMUP + SPAWNS, processRun(), { cwd: null });
    const worktree = await runnerSpawns(WARMUP + SPAWNS, processRun(), {
      cwd: gitRepository(dir),
      issue: { id: "bench-issue", identifier: "BENCH-1" },
    });
    const adapters = {};
    for (const adapterType of CLI_ADAPTERS)
      adapters[adapterType] = spawnStats(
        await runnerSpawns(WARMUP + SPAWNS, await cliRun(adapterType, dir), { cwd: null }),
      );
    return { plain: spawnStats(plain), worktree: spawnStats(worktree), adapters };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Times `pass` (one pass over the 1,000 lines) PARSE_ROUNDS times after a warm-up; ms per pass. */
function timePasses(pass) {
  for (let i = 0; i < WARMUP; i++) pass();
  const samples = [];
  for (let i = 0; i < PARSE_ROUNDS; i++) {
    const started = now();
    pass();
    samples.push(now() - started);
  }
  return stats(samples);
}

async function parseCosts() {
  const { adapterFor } = await tsImport("../bridge/src/runner/adapters/index.ts", import.meta.url);
  const results = {};
  for (const [adapterType, lines] of Object.entries(STREAMS)) {
    // Claude reports its own cost: its launch has a meter only when the agent set its own prices.
    const meter = adapterType === "claude_local" ? {} : { meter: METER };
    const launch = { command: "cli", args: [], env: {}, stdin: "", files: [], ...meter };
    let keys = 0;
    const baseline = timePasses(() => {
      for (const line of lines) keys += Object.keys(JSON.parse(line)).length;
    });
    let events = 0;
    let sawResult = true;
    const parser = timePasses(() => {
      const parse = adapterFor(adapterType).parser(launch);
      for (const line of lines) events += parse.line(line).length;
      sawResult &&= parse.summary().sawResult;
    });
    results[adapterType] = {
      baseline,
      parser,
      eventsPerPass: events / (WARMUP + PARSE_ROUNDS),
      sawResult: sawResult && keys > 0,
    };
  }
  return results;
}

const ms = (value) => `${value.toFixed(3)} ms`;
const ratio = (value, baseline) => `${(value / baseline).toFixed(1)}×`;

function printReport({ spawn, parse }) {
  console.table(
    [
      ["process, agent's own directory", spawn.plain],
      ["process, issue worktree of a git workspace", spawn.worktree],
      ...Object.entries(spawn.adapters).map(([adapterType, s]) => [`${adapterType}, launch prepared`, s]),
    ].flatMap(([label, s]) => [
      {
        "(a) wake → spawn": `runner, ${label}`,
        p50: ms(s.p50),
        p99: ms(s.p99),
        "p50 ×": ratio(s.p50, s.baseline.p50),
        "p99 ×": ratio(s.p99, s.baseline.p99),
      },
      {
        "(a) wake → spawn": `    bare spawn("true"), interleaved`,
        p50: ms(s.baseline.p50),
        p99: ms(s.baseline.p99),
        "p50 ×": "1.0×",
        "p99 ×": "1.0×",
      },
    ]),
  );
  console.table(
    Object.entries(parse).map(([adapterType, r]) => ({
      "(b) parse 1,000 lines": adapterType,
      "JSON.parse p50": ms(r.baseline.p50),
      "parser p50": ms(r.parser.p50),
      "parser p99": ms(r.parser.p99),
      "p50 × JSON.parse": ratio(r.parser.p50, r.baseline.p50),
      "events/pass": r.eventsPerPass,
    })),
  );
}

export async function run() {
  const spawn = await wakeToSpawn();
  const parse = await parseCosts();
  printReport({ spawn, parse });
  const clean =
    [spawn.plain, spawn.worktree, ...Object.values(spawn.adapters)].every((s) => s.failed === 0) &&
    Object.values(parse).every((r) => r.sawResult && r.eventsPerPass > 0);
  return {
    name,
    clean,
    spawns: SPAWNS,
    parseRounds: PARSE_ROUNDS,
    streamLines: STREAM_LINES,
    wakeToSpawn: spawn,
    parse: Object.fromEntries(
      Object.entries(parse).map(([adapterType, r]) => [
        adapterType,
        { ...r, p50Ratio: r.parser.p50 / r.baseline.p50 },
      ]),
    ),
  };
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const summary = await run();
  if (!summary.clean) process.exitCode = 1;
}
