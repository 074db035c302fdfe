// Shared benchmark helpers: load generation (autocannon), booting the real local stack
// (`node scripts/start.mjs`, as test/support/stack.ts does for the e2e suite) and logging in.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";

const HOST = "127.0.0.1";
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const START_SCRIPT = path.join(REPO_ROOT, "scripts", "start.mjs");
const READY_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 15_000;

export const DEFAULT_CONNECTIONS = 16;
export const DEFAULT_DURATION_SECONDS = 10;

export const ADMIN_EMAIL = "admin@example.com";
export const ADMIN_PASSWORD = "change-me-locally";

/** Seconds per measured run: BENCH_DURATION if set, else 10. */
export function benchDurationSeconds() {
  const fromEnv = Number(process.env.BENCH_DURATION);
  return Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_DURATION_SECONDS;
}

/**
 * Loads one URL with autocannon.
 * @param {{ url: string, headers?: Record<string, string>, connections?: number, duration?: number }} options
 * @returns {Promise<{ requestsPerSec: number, p50: number, p99: number, non2xx: number, errors: number, total: number }>}
 */
export async function measure({ url, headers = {}, connections = DEFAULT_CONNECTIONS, duration }) {
  const result = await autocannon({
    url,
    headers,
    connections,
    duration: duration ?? benchDurationSeconds(),
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

/** A run is only meaningful if every request answered 2xx. */
export function isClean(run) {
  return run.non2xx === 0 && run.errors === 0;
}

/** Prints a loud banner: non-2xx answers or errors mean the bench measured the wrong thing. */
export function reportDirtyRun(label, run) {
  const line = "!".repeat(78);
  console.error(
    `\n${line}\n!! ${label}: ${run.non2xx} non-2xx responses and ${run.errors} errors out of ` +
      `${run.total} requests.\n!! This benchmark did NOT measure what it claims to; its numbers are invalid.\n${line}\n`,
  );
}

export function findFreePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function isPortOpen(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    socket.setTimeout(1_000);
    const settle = (open) => {
      socket.destroy();
      resolve(open);
    };
    socket.once("connect", () => settle(true));
    socket.once("timeout", () => settle(false));
    socket.once("error", () => settle(false));
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function isHealthy(baseUrl) {
  try {
    const response = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

async function waitUntilHealthy(baseUrl, child) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`scripts/start.mjs exited early with code ${child.exitCode}`);
    }
    if (await isHealthy(baseUrl)) return;
    await sleep(250);
  }
  throw new Error(`${baseUrl}/api/health did not answer 200 within ${READY_TIMEOUT_MS} ms`);
}

async function stopStartScript(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const stopped = await Promise.race([exited.then(() => true), sleep(STOP_TIMEOUT_MS).then(() => false)]);
  if (!stopped) {
    console.error(`scripts/start.mjs did not exit within ${STOP_TIMEOUT_MS} ms; sending SIGKILL`);
    child.kill("SIGKILL");
    await exited;
  }
}

/**
 * How the stack serves the Worker: `serve` (default) is workerd serving the built Worker directly
 * (`npm start`); `dev` is `npm run dev`'s `wrangler dev`, whose reload proxy caps every route well
 * below what the Worker does (docs/decisions.md, "How the benchmarks reach the Worker").
 */
export function benchStack() {
  const stack = process.env.BENCH_STACK ?? "serve";
  if (stack !== "serve" && stack !== "dev") throw new Error(`BENCH_STACK must be serve or dev, got ${stack}`);
  return stack;
}

const stackArgs = () => (benchStack() === "dev" ? ["--dev"] : []);

/**
 * Boots `node scripts/start.mjs` (with `extraEnv` on top of this process's environment) on a free port with an empty state directory and LOG_LEVEL=warn.
 * `logLevel: null` leaves LOG_LEVEL and LOG_REQUESTS unset, so the stack logs at start.mjs's default (what a user gets).
 * Its output goes to this process's stderr. Ctrl-C or SIGTERM here also stops the stack.
 * @param {Record<string, string>} [extraEnv]
 * @param {{ logLevel?: string | null, stateDir?: string }} [options]
 * `stateDir` boots on an existing state directory (a previous stack's, stopped with `keepState`);
 * the caller then removes it. `pid` is start.mjs's, for reading its children (workerd) in /proc.
 * @returns {Promise<{ baseUrl: string, pid: number | undefined, stateDir: string, stop: (options?: { keepState?: boolean }) => Promise<void> }>}
 */
export async function bootStack(extraEnv = {}, { logLevel = "warn", stateDir: reuse } = {}) {
  const port = await findFreePort();
  const stateDir = reuse ?? (await mkdtemp(path.join(tmpdir(), "switchboard-bench-")));
  const baseUrl = `http://${HOST}:${port}`;
  const env = { ...process.env, ...extraEnv, PORT: String(port), STATE_DIR: stateDir, LOG_LEVEL: logLevel };
  if (logLevel === null) {
    delete env.LOG_LEVEL;
    delete env.LOG_REQUESTS;
  }
  const child = spawn(process.execPath, [START_SCRIPT, ...stackArgs()], {
    cwd: REPO_ROOT,
    env,
    stdio: ["ignore", process.stderr, process.stderr],
  });

  let stopping;
  const stop = ({ keepState = reuse !== undefined } = {}) => {
    stopping ??= (async () => {
      process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
      await stopStartScript(child);
      if (!keepState) await rm(stateDir, { recursive: true, force: true });
      if (await isPortOpen(port)) console.error(`WARNING: port ${port} still open after the stack stopped`);
    })();
    return stopping;
  };
  const onSignal = (signal) => {
    console.error(`\nreceived ${signal}; stopping the stack`);
    stop().finally(() => process.exit(130));
  };
  process.on("SIGINT", onSignal).on("SIGTERM", onSignal);

  try {
    await waitUntilHealthy(baseUrl, child);
  } catch (error) {
    await stop();
    throw error;
  }
  return { baseUrl, pid: child.pid, stateDir, stop };
}

async function expectStatus(response, status, what) {
  if (response.status !== status) {
    throw new Error(`${what}: expected HTTP ${status}, got ${response.status}: ${await response.text()}`);
  }
  return response.json();
}

/** Logs in as the local admin (creating it on an empty database) and generates an API key. */
export async function createAdminApiKey(baseUrl) {
  const login = await fetch(`${baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  });
  const loginBody = await expectStatus(login, 200, "POST /api/auth/login");
  const cookie = login.headers
    .getSetCookie()
    .map((header) => header.split(";")[0])
    .find((pair) => pair.startsWith("web-auth.session-token="));
  if (!cookie) throw new Error("POST /api/auth/login did not set the session cookie");

  const created = await fetch(`${baseUrl}/api/user/api-key`, {
    method: "POST",
    headers: { Cookie: cookie, "X-CSRF-Token": loginBody.data.csrfToken },
  });
  const createdBody = await expectStatus(created, 201, "POST /api/user/api-key");
  return createdBody.data.apiKey;
}

/** Signs the local admin in through the API: the session cookie and CSRF token a browser would hold. */
export async function signInAdmin(baseUrl) {
  const login = await fetch(`${baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`);
  const { data } = await login.json();
  const cookie = login.headers
    .getSetCookie()
    .map((header) => header.split(";")[0])
    .find((pair) => pair.startsWith("web-auth.session-token="));
  if (!cookie) throw new Error("login set no session cookie");
  return { cookie, csrf: data.csrfToken };
}

/** A JSON request as the signed-in admin (`signInAdmin`); throws on any answer but 2xx. */
export async function sendAsAdmin(baseUrl, auth, method, route, body) {
  const response = await fetch(`${baseUrl}${route}`, {
    method,
    headers: { cookie: auth.cookie, "X-CSRF-Token": auth.csrf, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
  return response.json();
}
