/**
 * One heartbeat run as a child process in a process group of its own: spawned with an allowlisted
 * environment plus the run's, the prompt on stdin, output streamed in order. Timeout and cancel stop
 * the whole group (SIGTERM, then SIGKILL after a grace period); whatever the agent left running in
 * its group is stopped when its main process exits. Summarised on exit.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chownSync, mkdirSync } from "node:fs";
import path from "node:path";
import { LOG_FRAME_MAX_CHARS, type RunAssignment } from "../protocol/runner.ts";
import { INHERITED_ENV, type RunAs } from "./config.ts";

/** A line `PLATFORM_USAGE {json}` on stdout reports usage and cost; the last one counts. */
const USAGE_LINE = /^PLATFORM_USAGE\s+(\{.*\})\s*$/m;
const KILL_GRACE_MS = 3_000;
/** After the main process exits, how long its output may take to drain before it is cut. */
const DRAIN_MS = 2_000;

export interface ProcessOutcome {
  exitCode: number | null;
  timedOut: boolean;
  error?: string;
  usage?: Record<string, unknown>;
  costCents?: number;
}

export interface ProcessOptions {
  /** Agents without adapterConfig.cwd work in `<workDir>/<agent id>`. */
  workDir: string;
  runAs: RunAs | null;
  onOutput(stream: "stdout" | "stderr" | "system", text: string): void;
  /** The run's process group exists (true) or is gone (false). */
  onProcessGroup?(pgid: number, live: boolean): void;
}

/** What an agent inherits from the runner: enough to find programs, nothing secret. */
function inheritedEnv(runAs: RunAs | null): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  if (runAs) env.HOME = runAs.home;
  return env;
}

function parseUsage(tail: string): Pick<ProcessOutcome, "usage" | "costCents"> {
  const lines = tail.split("\n").filter((line) => USAGE_LINE.test(line));
  const last = lines.at(-1)?.match(USAGE_LINE)?.[1];
  if (!last) return {};
  try {
    const usage = JSON.parse(last) as Record<string, unknown>;
    const cost = usage.costCents;
    return {
      usage,
      ...(typeof cost === "number" && Number.isInteger(cost) && cost >= 0 ? { costCents: cost } : {}),
    };
  } catch {
    return {};
  }
}

/** Splits text into frames no longer than the protocol allows. */
function* frames(text: string): Generator<string> {
  for (let at = 0; at < text.length; at += LOG_FRAME_MAX_CHARS)
    yield text.slice(at, at + LOG_FRAME_MAX_CHARS);
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is already gone
  }
}

/** The run's working directory: its configured cwd, or a directory of the agent's own. */
function workingDirectory(run: RunAssignment, options: ProcessOptions): string {
  if (run.cwd) return run.cwd;
  const dir = path.join(options.workDir, run.agentId);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (options.runAs) chownSync(dir, options.runAs.uid, options.runAs.gid);
  return dir;
}

export class AgentProcess {
  private child: ChildProcess | null = null;
  private stdoutTail = "";
  private killTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly run: RunAssignment,
    private readonly options: ProcessOptions,
  ) {}

  /** Runs to completion; never rejects (a spawn failure is an outcome too). */
  start(): Promise<ProcessOutcome> {
    return new Promise((resolve) => {
      let child: ChildProcess;
      try {
        const runAs = this.options.runAs;
        child = spawn(this.run.command, this.run.args, {
          cwd: workingDirectory(this.run, this.options),
          env: { ...inheritedEnv(runAs), ...this.run.env },
          stdio: ["pipe", "pipe", "pipe"],
          detached: true,
          ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
        });
      } catch (error) {
        resolve({ exitCode: null, timedOut: false, error: `spawn failed: ${(error as Error).message}` });
        return;
      }
      this.child = child;
      if (child.pid !== undefined) this.options.onProcessGroup?.(child.pid, true);
      this.pipe(child);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        this.options.onOutput("system", `timeout after ${this.run.timeoutSec}s: stopping\n`);
        this.stop();
      }, this.run.timeoutSec * 1000);
      let spawnError: string | undefined;
      child.once("error", (error) => {
        spawnError = `spawn failed: ${error.message}`;
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        this.endGroup(child);
        this.afterDrain(child, () =>
          resolve({
            exitCode: code,
            timedOut,
            ...(spawnError ? { error: spawnError } : {}),
            ...parseUsage(this.stdoutTail),
          }),
        );
      });
      child.once("close", () => {
        // A spawn failure emits "error" and "close" but no "exit".
        if (child.pid === undefined) resolve({ exitCode: null, timedOut: false, error: spawnError });
      });
      child.stdin?.on("error", () => undefined); // a process that never reads stdin is fine
      child.stdin?.end(this.run.prompt);
    });
  }

  /** SIGTERM to the run's whole process group now, SIGKILL to what is left after the grace period. */
  stop(): void {
    const pid = this.child?.pid;
    if (pid === undefined || this.child?.exitCode !== null || this.killTimer) return;
    signalGroup(pid, "SIGTERM");
    this.killTimer = setTimeout(() => signalGroup(pid, "SIGKILL"), KILL_GRACE_MS);
    this.killTimer.unref();
  }

  /** The main process is gone: nothing else of the run may outlive it. */
  private endGroup(child: ChildProcess): void {
    if (this.killTimer) clearTimeout(this.killTimer);
    if (child.pid === undefined) return;
    signalGroup(child.pid, "SIGKILL");
    this.options.onProcessGroup?.(child.pid, false);
  }

  /** Waits for the output to drain; a descendant that escaped the group must not hold the run open. */
  private afterDrain(child: ChildProcess, done: () => void): void {
    const cut = setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      done();
    }, DRAIN_MS);
    child.once("close", () => {
      clearTimeout(cut);
      done();
    });
  }

  private pipe(child: ChildProcess): void {
    child.stdout?.setEncoding("utf8").on("data", (text: string) => {
      this.stdoutTail = `${this.stdoutTail}${text}`.slice(-64 * 1024);
      for (const part of frames(text)) this.options.onOutput("stdout", part);
    });
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      for (const part of frames(text)) this.options.onOutput("stderr", part);
    });
  }
}
