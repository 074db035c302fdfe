/**
 * One heartbeat run as a child process: spawned with the run's environment, the prompt on stdin,
 * output streamed in order, killed at its timeout (SIGTERM, then SIGKILL), and summarised on exit.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { LOG_FRAME_MAX_CHARS, type RunAssignment } from "../protocol/runner.ts";

/** A line `PLATFORM_USAGE {json}` on stdout reports usage and cost; the last one counts. */
const USAGE_LINE = /^PLATFORM_USAGE\s+(\{.*\})\s*$/m;
const KILL_GRACE_MS = 5_000;
/** Environment the child inherits from the bridge: enough to find programs, nothing secret. */
const INHERITED = ["PATH", "HOME", "LANG", "TZ", "TMPDIR", "SYSTEMROOT"];

export interface ProcessOutcome {
  exitCode: number | null;
  timedOut: boolean;
  error?: string;
  usage?: Record<string, unknown>;
  costCents?: number;
}

export interface ProcessCallbacks {
  onOutput(stream: "stdout" | "stderr" | "system", text: string): void;
}

function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
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

export class AgentProcess {
  private child: ChildProcess | null = null;
  private stdoutTail = "";

  constructor(
    readonly run: RunAssignment,
    private readonly callbacks: ProcessCallbacks,
  ) {}

  /** Runs to completion; never rejects (a spawn failure is an outcome too). */
  start(): Promise<ProcessOutcome> {
    return new Promise((resolve) => {
      let child: ChildProcess;
      try {
        child = spawn(this.run.command, this.run.args, {
          cwd: this.run.cwd ?? undefined,
          env: { ...inheritedEnv(), ...this.run.env },
          stdio: ["pipe", "pipe", "pipe"],
        });
      } catch (error) {
        resolve({ exitCode: null, timedOut: false, error: `spawn failed: ${(error as Error).message}` });
        return;
      }
      this.child = child;
      this.pipe(child);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        this.callbacks.onOutput("system", `timeout after ${this.run.timeoutSec}s: stopping\n`);
        this.stop();
      }, this.run.timeoutSec * 1000);
      let spawnError: string | undefined;
      child.once("error", (error) => {
        spawnError = `spawn failed: ${error.message}`;
      });
      child.once("close", (code) => {
        clearTimeout(timer);
        resolve({
          exitCode: code,
          timedOut,
          ...(spawnError ? { error: spawnError } : {}),
          ...parseUsage(this.stdoutTail),
        });
      });
      child.stdin?.on("error", () => undefined); // a process that never reads stdin is fine
      child.stdin?.end(this.run.prompt);
    });
  }

  /** SIGTERM now, SIGKILL if it is still there after the grace period. */
  stop(): void {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    child.kill("SIGTERM");
    setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }, KILL_GRACE_MS).unref();
  }

  private pipe(child: ChildProcess): void {
    child.stdout?.setEncoding("utf8").on("data", (text: string) => {
      this.stdoutTail = `${this.stdoutTail}${text}`.slice(-64 * 1024);
      for (const part of frames(text)) this.callbacks.onOutput("stdout", part);
    });
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      for (const part of frames(text)) this.callbacks.onOutput("stderr", part);
    });
  }
}
