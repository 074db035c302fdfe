// Boots the real local stack (`node scripts/start.mjs`) for end-to-end suites: a free port, a fresh
// state directory (empty D1 database), and a stop() that proves every child process is gone.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { seedMigratedState } from "./migrated-state.ts";

export interface Stack {
  /** e.g. http://127.0.0.1:41234 (no trailing slash). */
  readonly baseUrl: string;
  readonly port: number;
  /** Where wrangler keeps D1 and Durable Object storage; another stack may reuse it after stop(). */
  readonly stateDir: string;
  /** start.mjs's process id: workerd and the bridge are its descendants (test/support/process-memory.ts). */
  readonly pid: number;
  /**
   * SIGTERM to start.mjs, wait for it to exit, check the port is closed, remove the state dir (kept
   * with `keepState`, so a later startStack({ stateDir }) comes back to the same data).
   */
  stop(options?: { keepState?: boolean }): Promise<void>;
  /** The last few kilobytes start.mjs and its children printed (stdout and stderr). */
  output(): string;
}

export interface StackOptions {
  /** Extra environment for start.mjs (PORT, STATE_DIR and LOG_LEVEL are set by the helper). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * LOG_LEVEL for start.mjs (default warn); null leaves it and LOG_REQUESTS unset, so the stack logs
   * as it does for a user who set nothing.
   */
  readonly logLevel?: string | null;
  /** How long to wait for GET /api/health to answer 200. */
  readonly readyTimeoutMs?: number;
  /** Reuse this state directory (a stopped stack's, kept with `keepState`) instead of a fresh one. */
  readonly stateDir?: string;
  /** `npm run dev` (wrangler dev, reloading on change) instead of `npm start` (workerd serves the built Worker). */
  readonly dev?: boolean;
  /**
   * Boot on an empty database, as a user's first `npm start` does. By default a fresh state directory
   * starts with every migration already applied (test/support/migrated-state.ts), which saves each
   * suite about 6 s; start.mjs still runs the migrations and finds them applied.
   */
  readonly emptyDatabase?: boolean;
}

const HOST = "127.0.0.1";
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const START_SCRIPT = path.join(REPO_ROOT, "scripts", "start.mjs");
const DEFAULT_READY_TIMEOUT_MS = 90_000;
/** start.mjs gives its children 5 s before SIGKILL, plus a little to reap them. */
const STOP_TIMEOUT_MS = 15_000;
const OUTPUT_TAIL_CHARS = 8_000;

export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("could not find a free port"))));
    });
  });
}

/** Resolves true if something accepts a TCP connection on 127.0.0.1:port. */
export function isPortOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    socket.setTimeout(1_000);
    const settle = (open: boolean): void => {
      socket.destroy();
      resolve(open);
    };
    socket.once("connect", () => settle(true));
    socket.once("timeout", () => settle(false));
    socket.once("error", () => settle(false));
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function isHealthy(baseUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** Keeps the last few kilobytes of the child's output for error messages. */
function captureOutput(child: ChildProcess): () => string {
  let tail = "";
  const append = (chunk: Buffer): void => {
    tail = (tail + chunk.toString("utf8")).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  return () => tail;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

async function waitUntilHealthy(
  baseUrl: string,
  child: ChildProcess,
  timeoutMs: number,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `start.mjs exited early (code ${child.exitCode}, signal ${child.signalCode}):\n${output()}`,
      );
    }
    if (await isHealthy(baseUrl)) return;
    await sleep(250);
  }
  throw new Error(`${baseUrl}/api/health did not answer 200 within ${timeoutMs} ms:\n${output()}`);
}

async function stopProcess(child: ChildProcess, output: () => string): Promise<void> {
  const exited = exitOf(child);
  child.kill("SIGTERM");
  const timedOut = Symbol("timed out");
  const result = await Promise.race([exited, sleep(STOP_TIMEOUT_MS).then(() => timedOut)]);
  if (result === timedOut) {
    child.kill("SIGKILL");
    await exited;
    throw new Error(`start.mjs did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM:\n${output()}`);
  }
  if (result !== 0) throw new Error(`start.mjs exited with code ${String(result)} on SIGTERM:\n${output()}`);
}

async function assertPortClosed(port: number): Promise<void> {
  if (await isPortOpen(port)) {
    throw new Error(`port ${port} still accepts connections after start.mjs stopped: a child survived`);
  }
}

function stackEnvironment(options: StackOptions, port: number, stateDir: string): NodeJS.ProcessEnv {
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  const logLevel = options.logLevel === undefined ? "warn" : options.logLevel;
  if (logLevel === null) {
    delete inherited.LOG_LEVEL;
    delete inherited.LOG_REQUESTS;
  }
  const logging = logLevel === null ? {} : { LOG_LEVEL: logLevel };
  return { ...inherited, ...options.env, ...logging, PORT: String(port), STATE_DIR: stateDir };
}

/** Tries a port's race lost this many times: another process took the free port before workerd bound it. */
const PORT_RACES_TOLERATED = 2;

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await startStackOnce(options);
    } catch (error) {
      // findFreePort releases the port before workerd binds it; on a busy machine another test's
      // process can take it in between. That is the harness's race, not the stack's: try another.
      const lostPortRace = String(error).includes("Address already in use");
      if (!lostPortRace || attempt >= PORT_RACES_TOLERATED) throw error;
    }
  }
}

async function freshStateDir(options: StackOptions): Promise<string> {
  const stateDir = await mkdtemp(path.join(tmpdir(), "switchboard-e2e-"));
  if (!options.emptyDatabase) await seedMigratedState(stateDir);
  return stateDir;
}

async function startStackOnce(options: StackOptions): Promise<Stack> {
  const port = await findFreePort();
  const stateDir = options.stateDir ?? (await freshStateDir(options));
  const baseUrl = `http://${HOST}:${port}`;
  const child = spawn(process.execPath, [START_SCRIPT, ...(options.dev ? ["--dev"] : [])], {
    cwd: REPO_ROOT,
    env: stackEnvironment(options, port, stateDir),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = captureOutput(child);

  let stopped: Promise<void> | undefined;
  const stop = (stopOptions: { keepState?: boolean } = {}): Promise<void> => {
    stopped ??= (async () => {
      try {
        await stopProcess(child, output);
        await assertPortClosed(port);
      } finally {
        if (!stopOptions.keepState) await rm(stateDir, { recursive: true, force: true });
      }
    })();
    return stopped;
  };

  try {
    await waitUntilHealthy(baseUrl, child, options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS, output);
  } catch (error) {
    // A state dir the caller gave is theirs to keep (a retry boots on it again).
    await stop({ keepState: options.stateDir !== undefined }).catch(() => undefined);
    throw error;
  }
  return { baseUrl, port, stateDir, pid: child.pid ?? 0, stop, output };
}
