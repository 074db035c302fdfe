/**
 * One child process in a process group of its own: spawned with exactly the environment it is given,
 * its standard input written and closed, its output streamed in order. stop() ends the whole group
 * (SIGTERM, then SIGKILL after a grace period); whatever the child left running in its group is
 * stopped when it exits, so nothing of a run outlives it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { RunAs } from "./config.ts";

const KILL_GRACE_MS = 3_000;
/** After the main process exits, how long its output may take to drain before it is cut. */
const DRAIN_MS = 2_000;

export interface ChildSpec {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stdin: string;
  runAs: RunAs | null;
}

export interface ChildHandlers {
  onStdout(text: string): void;
  onStderr(text: string): void;
  /** The group exists (true) or is gone (false). */
  onProcessGroup?(pgid: number, live: boolean): void;
}

export interface ChildEnd {
  exitCode: number | null;
  /** The process never started (not found, not executable, bad cwd …). */
  spawnError?: { code: string | undefined; message: string };
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is already gone
  }
}

export class GroupChild {
  private child: ChildProcess | null = null;
  private killTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly spec: ChildSpec,
    private readonly handlers: ChildHandlers,
  ) {}

  /** Runs to completion; never rejects (a spawn failure is an end too). */
  start(): Promise<ChildEnd> {
    return new Promise((resolve) => {
      const { command, args, cwd, env, runAs } = this.spec;
      let child: ChildProcess;
      try {
        child = spawn(command, args, {
          cwd,
          env,
          stdio: ["pipe", "pipe", "pipe"],
          detached: true,
          ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
        });
      } catch (error) {
        resolve({ exitCode: null, spawnError: spawnErrorOf(error) });
        return;
      }
      this.child = child;
      if (child.pid !== undefined) this.handlers.onProcessGroup?.(child.pid, true);
      child.stdout?.setEncoding("utf8").on("data", (text: string) => this.handlers.onStdout(text));
      child.stderr?.setEncoding("utf8").on("data", (text: string) => this.handlers.onStderr(text));
      let spawnError: ChildEnd["spawnError"];
      child.once("error", (error) => {
        spawnError = spawnErrorOf(error);
      });
      child.once("exit", (code) => {
        this.endGroup(child);
        this.afterDrain(child, () => resolve({ exitCode: code, ...(spawnError ? { spawnError } : {}) }));
      });
      child.once("close", () => {
        // A spawn failure emits "error" and "close" but no "exit".
        if (child.pid === undefined) resolve({ exitCode: null, spawnError });
      });
      child.stdin?.on("error", () => undefined); // a process that never reads stdin is fine
      child.stdin?.end(this.spec.stdin);
    });
  }

  /** SIGTERM to the whole group now, SIGKILL to what is left after the grace period. */
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
    this.handlers.onProcessGroup?.(child.pid, false);
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
}

function spawnErrorOf(error: unknown): NonNullable<ChildEnd["spawnError"]> {
  const code = (error as NodeJS.ErrnoException).code;
  return { code, message: (error as Error).message };
}
