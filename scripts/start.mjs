#!/usr/bin/env node
// `npm start`: prepares local state and runs the whole local stack until Ctrl-C, the Worker built once
// and served by workerd as in production (scripts/serve-worker.mjs). `npm run dev` (--dev) runs the
// Worker under `wrangler dev` instead, which rebuilds and reloads it when its code changes.
//
// Environment: PORT (default 8787), LOG_LEVEL (default warn; every process of the stack honours it)
// and LOG_REQUESTS=1 (a line per request; see scripts/log-settings.mjs), STATE_DIR (optional; where
// the local D1 database, Durable Object storage and the local runner's work folders live, default
// .wrangler/state), INSPECTOR_PORT (where DevTools attach; `wrangler dev` always picks a free one),
// BRIDGE=0 (no WhatsApp bridge), RUNNER=0 (no local agent runner), CRON=0 (no local cron trigger).
//
// The Worker comes first; once it answers, the bridge, a local runner for the companies the admin
// created (scripts/local-runner.mjs) and the every-minute cron trigger (scripts/local-cron.mjs) start,
// so none of them logs connection failures while workerd is still booting.
//
// Every long-running child is a "service" (see serviceDefinitions). Each runs in its own process
// group, so stopping a service also stops the processes it started (wrangler dev runs workerd).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildCommand } from "./build-worker.mjs";
import { ensureDevVars, readDevVars } from "./dev-vars.mjs";
import { startLocalCron } from "./local-cron.mjs";
import { localRunnerToken } from "./local-runner.mjs";
import { DEFAULT_LOG_LEVEL, logSettings } from "./log-settings.mjs";
import { groupIsAlive, signalGroup } from "./process-group.mjs";
import { bridgeService, HOST, persistArgs, runnerService, WRANGLER_ENV, workerService } from "./services.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const WRANGLER = path.join(ROOT, "node_modules", ".bin", "wrangler");
const READY_TIMEOUT_MS = 60_000;
const READY_POLL_INTERVAL_MS = 250;
const STOP_GRACE_MS = 5_000;
const STOP_KILL_WAIT_MS = 2_000;

/** @typedef {{ port: number, logLevel: string, processLogLevel: string, stateDir: string | undefined, simulator: boolean, bridge: boolean, runner: boolean, cron: boolean, fleetGraceMs: string | undefined, dev: boolean }} Config */
/** @typedef {import("./services.mjs").Service} Service */
/** @typedef {{ name: string, child: import("node:child_process").ChildProcess, exited: Promise<void>, exitCode: number | null }} Running */

/** @type {Running[]} Children in start order; an exited one stays until its whole process group is gone. */
const running = [];
let stopping = false;
/** @type {{ stop(): void } | undefined} */
let cron;

function log(message) {
  console.log(`[start] ${message}`);
}

function fail(message) {
  console.error(`[start] ERROR: ${message}`);
}

/** @returns {Config} */
function readConfig() {
  const port = Number(process.env.PORT ?? 8787);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new Error(`PORT must be a TCP port number, got ${JSON.stringify(process.env.PORT)}`);
  }
  const stateDir = process.env.STATE_DIR ? path.resolve(process.env.STATE_DIR) : undefined;
  return {
    port,
    // Warnings and errors only unless asked: a line per request costs workerd a loopback call each.
    logLevel: logSettings(process.env).level,
    // The bridge's and the runner's level: LOG_LEVEL as given (LOG_REQUESTS is about the Worker's
    // request lines only).
    processLogLevel: process.env.LOG_LEVEL ?? DEFAULT_LOG_LEVEL,
    stateDir,
    // SIMULATOR=1: WhatsApp is the bridge's in-memory simulator, and the edge exposes its controls.
    simulator: process.env.SIMULATOR === "1",
    // BRIDGE=0 runs the edge alone (tests that start their own bridges).
    bridge: process.env.BRIDGE !== "0",
    // RUNNER=0: no local agent runner (tests that start their own runners).
    runner: process.env.RUNNER !== "0",
    // CRON=0: nothing fires the scheduled handler (it can still be called by hand).
    cron: process.env.CRON !== "0",
    fleetGraceMs: process.env.FLEET_GRACE_MS,
    // --dev (`npm run dev`): `wrangler dev`, which rebuilds the Worker when its code changes, behind
    // its reload proxy. Without it (--serve, the default) the Worker is built once and served by
    // workerd as in production (docs/decisions.md, "npm start serves the built Worker").
    dev: process.argv.slice(2).includes("--dev"),
  };
}

/** Binds port 0 on the loopback interface and returns the port the OS picked. */
function findFreePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Keeps an exited child on the stop list while processes of its group (e.g. workerd) remain. */
function forgetIfGroupGone(entry) {
  const index = running.indexOf(entry);
  if (index >= 0 && (entry.child.pid === undefined || !groupIsAlive(entry.child.pid))) {
    running.splice(index, 1);
  }
}

/**
 * Spawns a command in its own process group, output passed through (stdout dropped with `quiet`);
 * stdin closed, or fed `stdin`.
 * @param {{ cleanEnv?: boolean, stdin?: string, quiet?: boolean }} [options]
 */
function spawnInGroup(name, command, args, env = {}, options = {}) {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: options.cleanEnv ? env : { ...process.env, ...env },
    stdio: [options.stdin === undefined ? "ignore" : "pipe", options.quiet ? "ignore" : "inherit", "inherit"],
    detached: true,
  });
  if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  /** @type {Running} */
  const entry = { name, child, exitCode: null, exited: Promise.resolve() };
  entry.exited = new Promise((resolve) => {
    child.once("error", (error) => {
      fail(`${name} could not be started: ${error.message}`);
      entry.exitCode = 1;
      resolve();
    });
    child.once("exit", (code, signal) => {
      entry.exitCode = code ?? (signal ? 128 : 1);
      resolve();
    });
  });
  running.push(entry);
  entry.exited.then(() => forgetIfGroupGone(entry));
  return entry;
}

async function applyMigrations(config) {
  log(`applying D1 migrations locally${config.stateDir ? ` (state in ${config.stateDir})` : ""}`);
  const args = ["d1", "migrations", "apply", "DB", "--local", ...persistArgs(config)];
  const env = { ...WRANGLER_ENV, WRANGLER_LOG: config.logLevel };
  const migration = spawnInGroup("d1 migrations", WRANGLER, args, env);
  await migration.exited;
  if (stopping) return;
  if (migration.exitCode !== 0) {
    throw new Error(`wrangler d1 migrations apply failed (exit code ${migration.exitCode})`);
  }
}

/**
 * The Worker as `wrangler deploy` bundles it, in a directory of this process's own (removed on exit),
 * for workerd to serve; built while the migrations run, which do not need it.
 * @returns {Promise<string>} the directory
 */
async function buildBundle() {
  const dir = mkdtempSync(path.join(tmpdir(), "switchboard-worker-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  log("building the Worker (wrangler deploy --dry-run)");
  const { command, args, env } = buildCommand(dir);
  const build = spawnInGroup("build", command, args, env, { quiet: true });
  await build.exited;
  if (!stopping && build.exitCode !== 0) {
    throw new Error(`wrangler deploy --dry-run failed (exit code ${build.exitCode})`);
  }
  return dir;
}

/**
 * Registers (or reuses) the admin's local runner and starts it. Without one the stack still runs
 * (agents wait for a runner), so a failure here is a warning, not a stop.
 */
async function startLocalRunner(config, baseUrl) {
  const vars = readDevVars();
  let token;
  try {
    token = await localRunnerToken({
      baseUrl,
      stateDir: config.stateDir ?? path.join(ROOT, ".wrangler", "state"),
      email: process.env.ADMIN_EMAIL ?? vars.ADMIN_EMAIL ?? "admin@example.com",
      password: process.env.ADMIN_PASSWORD ?? vars.ADMIN_PASSWORD ?? "",
    });
  } catch (error) {
    fail(`no local agent runner: ${error.message} (RUNNER=0 starts none; README "Run your agents")`);
    return;
  }
  if (!stopping) startService(runnerService(config, token));
}

/** A service that exits on its own takes the whole stack down (exit code 1). Stopped in reverse order. */
function startService(service) {
  log(`starting ${service.name}`);
  const entry = spawnInGroup(service.name, service.command, service.args, service.env, service);
  entry.exited.then(() => {
    if (stopping) return;
    fail(`${service.name} exited unexpectedly (exit code ${entry.exitCode}); stopping everything`);
    void shutdown(1);
  });
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function isHealthy(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

async function waitForHealth(url) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (stopping) return false;
    if (await isHealthy(url)) return true;
    await sleep(READY_POLL_INTERVAL_MS);
  }
  return false;
}

function printReadyLine(baseUrl) {
  const vars = readDevVars();
  const email = vars.ADMIN_EMAIL ?? "admin@example.com";
  const password = vars.ADMIN_PASSWORD ?? "<ADMIN_PASSWORD from .dev.vars>";
  const body = JSON.stringify({ email, password });
  console.log(
    `[start] READY ${baseUrl}  |  docs: ${baseUrl}/api/docs  |  log in: ` +
      `curl -i -X POST ${baseUrl}/api/auth/login -H 'Content-Type: application/json' -d '${body}'`,
  );
}

async function waitForGroupExit(entry, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  await Promise.race([entry.exited, sleep(timeoutMs)]);
  while (groupIsAlive(entry.child.pid) && Date.now() < deadline) await sleep(100);
  return !groupIsAlive(entry.child.pid);
}

/** SIGTERM to the whole process group, SIGKILL if anything is left after the grace period. */
async function stopChild(entry) {
  const pid = entry.child.pid;
  if (pid === undefined || !groupIsAlive(pid)) return;
  signalGroup(pid, "SIGTERM");
  if (await waitForGroupExit(entry, STOP_GRACE_MS)) return;
  fail(`${entry.name} did not stop within ${STOP_GRACE_MS / 1000} s; sending SIGKILL`);
  signalGroup(pid, "SIGKILL");
  if (!(await waitForGroupExit(entry, STOP_KILL_WAIT_MS))) {
    fail(`process group ${pid} (${entry.name}) still has processes (possibly unreaped zombies)`);
  }
}

async function stopAllChildren() {
  for (const entry of [...running].reverse()) await stopChild(entry);
}

async function shutdown(exitCode) {
  if (stopping) return;
  stopping = true;
  cron?.stop();
  if (running.length > 0) log("stopping all services");
  await stopAllChildren();
  process.exit(exitCode);
}

function installSignalHandlers() {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => {
      log(`received ${signal}`);
      void shutdown(0);
    });
  }
}

async function main() {
  installSignalHandlers();
  const config = readConfig();
  ensureDevVars();
  const [bundle] = await Promise.all([config.dev ? undefined : buildBundle(), applyMigrations(config)]);
  if (stopping) return;
  startService(workerService(config, await findFreePort(), bundle));

  const baseUrl = `http://${HOST}:${config.port}`;
  if (await waitForHealth(`${baseUrl}/api/health`)) {
    if (stopping) return;
    if (config.bridge) startService(bridgeService(config));
    if (config.runner) await startLocalRunner(config, baseUrl);
    // Served, the cron is serve-worker's (--cron): the trigger path is not on the Worker's own port.
    if (config.cron && config.dev) cron = startLocalCron({ baseUrl, log });
    printReadyLine(baseUrl);
  } else if (!stopping) {
    fail(`${baseUrl}/api/health did not answer 200 within ${READY_TIMEOUT_MS / 1000} s`);
    await shutdown(1);
  }
}

main().catch(async (error) => {
  fail(error instanceof Error ? error.message : String(error));
  await shutdown(1);
});
