// The long-running children of `npm start` (scripts/start.mjs): the Worker (workerd serving the built
// Worker, or `wrangler dev` with --dev), the WhatsApp bridge, and the local agent runner.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readDevVars } from "./dev-vars.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const WRANGLER = path.join(ROOT, "node_modules", ".bin", "wrangler");
export const HOST = "127.0.0.1";

/** Quiet, offline-friendly wrangler: no telemetry, no banner (and so no update check). */
export const WRANGLER_ENV = {
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
};

/**
 * `env` adds to start.mjs's own environment, unless `cleanEnv`: then it is the whole environment.
 * `stdin` is written to the child's standard input, which is then closed.
 * @typedef {{ name: string, command: string, args: string[], env?: Record<string, string>, cleanEnv?: boolean, stdin?: string }} Service
 */

export function persistArgs(config) {
  return config.stateDir ? ["--persist-to", config.stateDir] : [];
}

/**
 * @param {string | undefined} bundle the built Worker (served mode), see scripts/build-worker.mjs
 * @returns {Service}
 */
export function workerService(config, inspectorPort, bundle) {
  return config.dev ? devWorkerService(config, inspectorPort) : servedWorkerService(config, bundle);
}

/** @returns {Service} */
function servedWorkerService(config, bundle) {
  return {
    name: "workerd (serve)",
    command: process.execPath,
    args: [
      path.join(ROOT, "scripts", "serve-worker.mjs"),
      "--ip",
      HOST,
      "--port",
      String(config.port),
      "--log-level",
      config.logLevel,
      ...(process.env.INSPECTOR_PORT ? ["--inspector-port", process.env.INSPECTOR_PORT] : []),
      ...(bundle ? ["--bundle", bundle] : []),
      // The served Worker's cron fires from serve-worker, which knows where Miniflare's trigger listens.
      ...(config.cron ? ["--cron"] : []),
      ...persistArgs(config),
      ...workerVars(config),
    ],
    // wrangler's own lines while it reads wrangler.toml ("Using secrets defined in .dev.vars") are info.
    env: { ...WRANGLER_ENV, WRANGLER_LOG: config.logLevel },
  };
}

/** @returns {Service} */
function devWorkerService(config, inspectorPort) {
  return {
    name: "wrangler dev",
    command: WRANGLER,
    args: [
      "dev",
      "--ip",
      HOST,
      "--port",
      String(config.port),
      "--inspector-port",
      String(inspectorPort),
      "--log-level",
      config.logLevel,
      "--show-interactive-dev-session=false",
      // Tells wrangler the cron is fired (scripts/local-cron.mjs does), so it does not warn that it is
      // not; it also routes /__scheduled to the scheduled handler.
      ...(config.cron ? ["--test-scheduled"] : []),
      ...persistArgs(config),
      ...workerVars(config),
    ],
    env: WRANGLER_ENV,
  };
}

const FORWARDED_TIMING_VARS = [
  "BROADCAST_GAP_MS",
  "SCHEDULER_RETRY_LIMIT",
  "SCHEDULER_RETRY_MS",
  "WEBHOOK_RETRY_SCHEDULE_MS",
  "WEBHOOK_ALLOWED_HOSTS",
  "GITHUB_API_URL",
];

/** Worker variables that follow the environment of `npm start` (`--var NAME:value`). */
function workerVars(config) {
  const vars = [];
  if (config.simulator) vars.push("--var", "SIMULATOR:1");
  if (config.fleetGraceMs) vars.push("--var", `FLEET_GRACE_MS:${config.fleetGraceMs}`);
  // Timing knobs tests turn down (production keeps the defaults documented in docs/).
  for (const name of FORWARDED_TIMING_VARS) {
    if (process.env[name]) vars.push("--var", `${name}:${process.env[name]}`);
  }
  return vars;
}

/** @returns {Service} */
export function bridgeService(config) {
  const devVars = readDevVars();
  return {
    name: "bridge",
    command: path.join(ROOT, "node_modules", ".bin", "tsx"),
    args: ["bridge/src/main.ts"],
    env: {
      EDGE_URL: `http://${HOST}:${config.port}`,
      BRIDGE_TOKEN: process.env.BRIDGE_TOKEN ?? devVars.BRIDGE_TOKEN ?? "",
      // A stable id lets a restarted local bridge take its sessions back within the grace period.
      BRIDGE_ID: process.env.BRIDGE_ID ?? "local-bridge",
      SIMULATOR: config.simulator ? "1" : "0",
      // Local files (127.0.0.1) are fair game on a developer's machine; production bridges refuse them.
      MEDIA_ALLOW_PRIVATE: process.env.MEDIA_ALLOW_PRIVATE ?? "1",
      LOG_LEVEL: config.processLogLevel,
    },
  };
}

/** What the runner keeps of this process's environment: nothing secret (docs/security.md). */
const RUNNER_INHERITED = ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "TERM", "SYSTEMROOT"];

/**
 * The local agent runner: its own process, with a clean environment and its token on stdin, never in
 * an environment variable an agent could read.
 * @returns {Service}
 */
export function runnerService(config, token) {
  const env = Object.fromEntries(
    RUNNER_INHERITED.filter((name) => process.env[name] !== undefined).map((name) => [
      name,
      process.env[name],
    ]),
  );
  return {
    name: "runner",
    command: process.execPath,
    args: ["--import", "tsx", "bridge/src/runner/main.ts"],
    env: {
      ...env,
      EDGE_URL: `http://${HOST}:${config.port}`,
      LOG_LEVEL: config.processLogLevel,
      // Its work folders go under the stack's state dir (`<STATE_DIR>/runner`; without STATE_DIR the
      // runner's own default, .wrangler/state/runner in this checkout): deleting the state cleans them.
      ...(config.stateDir ? { STATE_DIR: config.stateDir } : {}),
      ...(process.env.RUNNER_SLOTS ? { RUNNER_SLOTS: process.env.RUNNER_SLOTS } : {}),
      ...(process.env.RUNNER_WORK_DIR ? { RUNNER_WORK_DIR: process.env.RUNNER_WORK_DIR } : {}),
    },
    cleanEnv: true,
    stdin: `${token}\n`,
  };
}
