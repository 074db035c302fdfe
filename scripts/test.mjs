#!/usr/bin/env node
// `npm test`: typecheck, lint, the layout check, then every vitest suite, in order, stopping at the first failure.
// The last line printed is always the summary `N passed, N failed[, N skipped]`.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const RESULTS_DIR = path.join(ROOT, ".test-results");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const VITEST = path.join(ROOT, "node_modules", ".bin", "vitest");

/**
 * `background`: started when the run starts (it waits on the network or disk, not the CPU), its
 * output kept and printed at its place in the order, where the run waits for it.
 * @typedef {{ name: string, command: string, args: string[], resultFile?: string, background?: boolean }} Step
 */

/** @returns {Step} */
function vitestStep(name, config) {
  const resultFile = path.join(RESULTS_DIR, `${name}.json`);
  return {
    name: `vitest ${name} (${config})`,
    command: VITEST,
    args: [
      "run",
      "--config",
      config,
      "--reporter=default",
      "--reporter=json",
      `--outputFile=${path.relative(ROOT, resultFile)}`,
    ],
    resultFile,
  };
}

/** @type {Step[]} */
const STEPS = [
  { name: "typecheck", command: NPM, args: ["run", "typecheck"] },
  { name: "lint", command: NPM, args: ["run", "lint"] },
  // Import cycles, oversized files, routers imported by lower layers, folders entered past index.ts.
  { name: "layout", command: process.execPath, args: [path.join(ROOT, "scripts", "check-layout.mjs")] },
  // The dashboard's browser tests (in e2e) need Debian's chromium; installed when missing. It starts
  // with the run and overlaps the typecheck and lint only: dpkg's unpacking must not load the
  // machine while the timing-sensitive suites run (a webhook retry test flaked when it did).
  {
    name: "chromium",
    command: process.execPath,
    args: [path.join(ROOT, "scripts", "ensure-chromium.mjs")],
    background: true,
  },
  // The real agent CLIs (pinned, scripts/agent-clis.json) for the adapter suites in bridge and e2e:
  // installed into a cache outside node_modules when missing, a no-op when there.
  {
    name: "agent CLIs",
    command: process.execPath,
    args: [path.join(ROOT, "scripts", "ensure-agent-clis.mjs")],
    background: true,
  },
  vitestStep("workers", "vitest.workers.config.ts"),
  vitestStep("bridge", "vitest.bridge.config.ts"),
  vitestStep("e2e", "vitest.e2e.config.ts"),
];

function announce(step, index) {
  console.log(`\n=== [${index + 1}/${STEPS.length}] ${step.name} ===`);
}

/** Starts `step` now with its output captured; resolves to its exit code and output. */
function startInBackground(step) {
  return new Promise((resolve) => {
    let output = "";
    const child = spawn(step.command, step.args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.once("error", (error) =>
      resolve({ code: 1, output: `could not run ${step.command}: ${error.message}\n` }),
    );
    child.once("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

/** Resolves to the exit code (1 if the command could not be started or was killed). */
function runStep(step) {
  return new Promise((resolve) => {
    const child = spawn(step.command, step.args, { cwd: ROOT, stdio: "inherit" });
    child.once("error", (error) => {
      console.error(`could not run ${step.command}: ${error.message}`);
      resolve(1);
    });
    child.once("exit", (code) => resolve(code ?? 1));
  });
}

function clearOldResults() {
  mkdirSync(RESULTS_DIR, { recursive: true });
  for (const step of STEPS) if (step.resultFile) rmSync(step.resultFile, { force: true });
}

/** @returns {{ passed: number, failed: number, skipped: number }} */
function readCounts(resultFile) {
  if (!existsSync(resultFile)) return { passed: 0, failed: 0, skipped: 0 };
  let report;
  try {
    report = JSON.parse(readFileSync(resultFile, "utf8"));
  } catch (error) {
    console.error(`could not read ${path.relative(ROOT, resultFile)}: ${error.message}`);
    return { passed: 0, failed: 0, skipped: 0 };
  }
  return {
    passed: Number(report.numPassedTests ?? 0),
    failed: Number(report.numFailedTests ?? 0),
    skipped: Number(report.numPendingTests ?? 0),
  };
}

function summaryLine() {
  const total = { passed: 0, failed: 0, skipped: 0 };
  for (const step of STEPS) {
    if (!step.resultFile) continue;
    const counts = readCounts(step.resultFile);
    total.passed += counts.passed;
    total.failed += counts.failed;
    total.skipped += counts.skipped;
  }
  const skipped = total.skipped > 0 ? `, ${total.skipped} skipped` : "";
  return `${total.passed} passed, ${total.failed} failed${skipped}`;
}

async function main() {
  clearOldResults();
  const started = new Map(
    STEPS.filter((step) => step.background).map((step) => [step, startInBackground(step)]),
  );
  let failedStep;
  for (const [index, step] of STEPS.entries()) {
    announce(step, index);
    const code = await (started.get(step)?.then(({ code, output }) => {
      process.stdout.write(output);
      return code;
    }) ?? runStep(step));
    if (code !== 0) {
      failedStep = { step, code };
      break;
    }
  }
  console.log("");
  if (failedStep) {
    console.error(`FAILED: step "${failedStep.step.name}" exited with code ${failedStep.code}`);
  }
  console.log(summaryLine());
  process.exitCode = failedStep ? 1 : 0;
}

await main();
