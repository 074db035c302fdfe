// `npm run bench`: runs every benchmark below, one after the other, and writes a JSON summary to
// bench/results/latest.json. Exits 1 if any benchmark failed or saw a non-2xx answer or an error.
// BENCH_DURATION (seconds per measured run, default 10) shortens or lengthens every run.
// BENCH_STACK: `serve` (default; `npm start`, workerd serving the built Worker) or `dev`
// (`npm run dev`'s wrangler dev, whose reload proxy every request then crosses).
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const RESULTS_FILE = path.join(BENCH_DIR, "results", "latest.json");

/** Each file exports `name` and `run()`, which returns a summary with a boolean `clean`. */
const BENCH_FILES = [
  "auth.mjs",
  "sessions.mjs",
  "messages.mjs",
  "webhooks.mjs",
  "control.mjs",
  "mcp.mjs",
  "automation.mjs",
  "dashboard.mjs",
  "board.mjs",
  "issues-scale.mjs",
  "events-replay.mjs",
  "defaults.mjs",
  "runner.mjs",
  "wa-sessions.mjs",
  "media.mjs",
];

async function runBench(file) {
  console.log(`\n=== bench/${file} ===`);
  const startedAt = new Date().toISOString();
  try {
    const bench = await import(pathToFileURL(path.join(BENCH_DIR, file)).href);
    const summary = await bench.run();
    return { file, startedAt, finishedAt: new Date().toISOString(), ...summary };
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    console.error(`\nBENCH FAILED: bench/${file}\n${message}`);
    return { file, startedAt, finishedAt: new Date().toISOString(), clean: false, error: message };
  }
}

function environment() {
  return {
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? "unknown",
    benchDuration: process.env.BENCH_DURATION ?? null,
    benchStack: process.env.BENCH_STACK ?? "serve",
  };
}

async function writeSummary(summary) {
  await mkdir(path.dirname(RESULTS_FILE), { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`\nsummary written to ${path.relative(process.cwd(), RESULTS_FILE)}`);
}

async function main() {
  const startedAt = new Date().toISOString();
  const results = [];
  for (const file of BENCH_FILES) results.push(await runBench(file));
  const clean = results.every((result) => result.clean);
  await writeSummary({
    startedAt,
    finishedAt: new Date().toISOString(),
    environment: environment(),
    clean,
    results,
  });
  if (!clean) {
    const failed = results.filter((result) => !result.clean).map((result) => result.file);
    console.error(`\nBENCH INVALID: ${failed.join(", ")} failed or saw non-2xx responses or errors`);
    process.exitCode = 1;
  }
}

await main();
