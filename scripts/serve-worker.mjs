#!/usr/bin/env node
// The Worker built once, the way `wrangler deploy` bundles it, and served by workerd directly
// (through Miniflare, the library `wrangler dev` itself drives): `npm start` uses it, `npm run dev`
// runs `wrangler dev` instead.
//
// `wrangler dev` puts a reload proxy in front of the Worker: a second workerd process whose one
// Durable Object queues every request and forwards it over HTTP to the Worker's own workerd. That
// proxy exists to hold requests while the code rebuilds; Cloudflare does not have it. Here it caps
// even a hello-world Worker at a few hundred requests per second on a 2-core machine, so the
// benchmarks measure the Worker without it (docs/decisions.md, "How the benchmarks reach the Worker").
//
// Miniflare also puts an entry Worker of its own in front of the Worker (request lines, pretty error
// pages, `/cdn-cgi/handler/scheduled`): one more isolate hop per request, about 0.25 ms of CPU and
// 0.3 ms of latency each on this machine, which Cloudflare does not have either. So the Worker gets
// its own socket on --port, as it gets Cloudflare's traffic first-hand, and Miniflare's entry listens
// on a private port beside it for the cron trigger; only when request lines are asked for (LOG_LEVEL
// info or debug), which the entry prints, does --port go through the entry as under `wrangler dev`
// (docs/decisions.md, "The Worker listens on its own socket").
//
// Takes the flags `scripts/start.mjs` gives `wrangler dev`: --ip, --port, --persist-to, --log-level,
// --inspector-port and repeated --var NAME:value; --bundle <dir>, a Worker already built there
// (`npm start` builds it while the D1 migrations run), else it builds one of its own first; and
// --cron, which fires the Worker's scheduled handler every minute (scripts/local-cron.mjs) through
// the entry, wherever it listens. Bindings, Durable Objects, D1, R2 and .dev.vars come from
// wrangler.toml through wrangler's own translation (unstable_getMiniflareWorkerOptions), and storage
// lives where `wrangler dev --persist-to` keeps it, so both serve the same local data.
import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Log, LogLevel, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { buildWorker, WRANGLER_CONFIG as CONFIG } from "./build-worker.mjs";
import { startLocalCron } from "./local-cron.mjs";
import { DEFAULT_LOG_LEVEL } from "./log-settings.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Where `wrangler dev` keeps local state when no --persist-to is given. */
const DEFAULT_STATE_DIR = path.join(ROOT, ".wrangler", "state");
const MINIFLARE_LOG_LEVELS = {
  debug: LogLevel.DEBUG,
  info: LogLevel.INFO,
  log: LogLevel.INFO,
  warn: LogLevel.WARN,
  error: LogLevel.ERROR,
  none: LogLevel.NONE,
};

function log(message) {
  console.log(`[serve] ${message}`);
}

/** @returns {{ ip: string, port: number, stateDir: string, logLevel: string, vars: Record<string, string>, bundle?: string, inspectorPort?: number, cron: boolean }} */
function parseArgs(argv) {
  const options = {
    ip: "127.0.0.1",
    port: 8787,
    stateDir: DEFAULT_STATE_DIR,
    logLevel: DEFAULT_LOG_LEVEL,
    vars: {},
    cron: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === "--cron") {
      options.cron = true;
      continue;
    }
    const value = argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--ip") options.ip = value;
    else if (flag === "--port") options.port = Number(value);
    else if (flag === "--persist-to") options.stateDir = path.resolve(value);
    else if (flag === "--log-level") options.logLevel = value;
    else if (flag === "--inspector-port") options.inspectorPort = Number(value);
    else if (flag === "--bundle") options.bundle = path.resolve(value);
    else if (flag === "--var") {
      const separator = value.indexOf(":");
      if (separator <= 0) throw new Error(`--var takes NAME:value, got ${JSON.stringify(value)}`);
      options.vars[value.slice(0, separator)] = value.slice(separator + 1);
    } else throw new Error(`unknown flag ${flag}`);
  }
  if (!Number.isInteger(options.port) || options.port <= 0 || options.port > 65535) {
    throw new Error(`--port must be a TCP port number, got ${options.port}`);
  }
  return options;
}

/** Whether --port is the Worker's own socket: unless request lines are wanted, which the entry prints. */
const servesDirectly = (logLevel) => logLevel < LogLevel.INFO;

function miniflareOptions(options, buildDir) {
  const { workerOptions } = unstable_getMiniflareWorkerOptions(CONFIG);
  const persistRoot = path.join(options.stateDir, "v3");
  const logLevel = MINIFLARE_LOG_LEVELS[options.logLevel] ?? LogLevel.INFO;
  const direct = servesDirectly(logLevel);
  return {
    // Miniflare's entry: on --port only when it prints request lines, else private (any free port).
    ...(direct ? { host: "127.0.0.1", port: 0 } : { host: options.ip, port: options.port }),
    log: new Log(logLevel),
    // A line per request, as `wrangler dev` prints, only when info lines are shown at all (LOG_LEVEL
    // info or debug, or LOG_REQUESTS=1: scripts/log-settings.mjs). Off, workerd skips the loopback
    // call that hands each line to this process.
    logRequests: !direct,
    // No internet needed: the placeholder `request.cf` instead of downloading Cloudflare's.
    cf: false,
    // /cdn-cgi/handler/scheduled on the entry, as under `wrangler dev`: --cron fires it.
    unsafeTriggerHandlers: true,
    // Chrome DevTools (or a CPU profile) attach here; off unless asked for.
    ...(options.inspectorPort ? { inspectorPort: options.inspectorPort } : {}),
    d1Persist: path.join(persistRoot, "d1"),
    durableObjectsPersist: path.join(persistRoot, "do"),
    r2Persist: path.join(persistRoot, "r2"),
    // OAuth clients, grants and hashed tokens (OAUTH_KV), kept across restarts like the rest.
    kvPersist: path.join(persistRoot, "kv"),
    cachePersist: path.join(persistRoot, "cache"),
    workers: [
      {
        ...workerOptions,
        name: "switchboard",
        ...(direct ? { unsafeDirectSockets: [{ host: options.ip, port: options.port }] } : {}),
        bindings: { ...workerOptions.bindings, ...options.vars },
        modulesRoot: buildDir,
        modules: [{ type: "ESModule", path: path.join(buildDir, "index.js") }],
      },
    ],
  };
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  // A bundle of our own goes on "exit", synchronously: Miniflare's own signal hook exits the process
  // before an async handler of ours could finish. A given one belongs to whoever built it.
  const buildDir = options.bundle ?? (await mkdtemp(path.join(tmpdir(), "switchboard-worker-")));
  if (!options.bundle) process.on("exit", () => rmSync(buildDir, { recursive: true, force: true }));
  /** @type {Miniflare | undefined} */
  let miniflare;
  /** @type {{ stop(): void } | undefined} */
  let cron;
  let stopping = false;
  const stop = async (signal, exitCode) => {
    if (stopping) return;
    stopping = true;
    cron?.stop();
    if (signal) log(`received ${signal}; stopping workerd`);
    await miniflare?.dispose().catch(() => undefined);
    process.exit(exitCode);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => void stop(signal, 0));

  try {
    if (!options.bundle) {
      log("building the Worker (wrangler deploy --dry-run)");
      await buildWorker(buildDir);
    }
    const settings = miniflareOptions(options, buildDir);
    miniflare = new Miniflare(settings);
    const entry = await miniflare.ready;
    const trigger = new URL("/cdn-cgi/handler/scheduled", entry).href;
    if (settings.logRequests) log(`workerd serves the Worker at ${entry.href}`);
    else {
      const served = await miniflare.unsafeGetDirectURL("switchboard");
      log(`workerd serves the Worker at ${served.href} (scheduled trigger: ${trigger})`);
    }
    if (options.cron) cron = startLocalCron({ baseUrl: entry.origin, log });
  } catch (error) {
    console.error(`[serve] ERROR: ${error instanceof Error ? error.message : String(error)}`);
    await stop(undefined, 1);
  }
}

main().catch((error) => {
  console.error(`[serve] ERROR: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
