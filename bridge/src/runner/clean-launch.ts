/**
 * The runner runs in a process whose environment holds nothing but what it needs: an agent process
 * can read its parent's initial environment (/proc/<ppid>/environ), so whatever the runner was
 * started with (a shell's exported secrets, npm's variables) must not be in the process that spawns
 * agents. The first process reads the token, starts the runner proper with a clean environment and the
 * token on its standard input, relays signals, and outlives it only to stop the process groups of the
 * runs it held if it dies without doing so itself.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { CLEAN_MARK, KEPT_ENV } from "./config.ts";

/** What the runner proper tells this process over IPC: the process groups of its live runs. */
export type GroupReport = { type: "group"; pgid: number; live: boolean };

export const isCleanProcess = (env: NodeJS.ProcessEnv): boolean => env[CLEAN_MARK] === "1";

export function cleanEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const clean: Record<string, string> = { [CLEAN_MARK]: "1" };
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && KEPT_ENV.has(name) && name !== "RUNNER_TOKEN_FILE") clean[name] = value;
  return clean;
}

function stopGroups(groups: Set<number>): void {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** Starts the runner proper and resolves with its exit code. */
export function launchClean(token: string): Promise<number> {
  const child: ChildProcess = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    env: cleanEnvironment(process.env),
    stdio: ["pipe", "inherit", "inherit", "ipc"],
  });
  child.stdin?.end(`${token}\n`);
  const groups = new Set<number>();
  child.on("message", (message: GroupReport) => {
    if (message?.type !== "group") return;
    if (message.live) groups.add(message.pgid);
    else groups.delete(message.pgid);
  });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const)
    process.on(signal, () => child.kill(signal === "SIGHUP" ? "SIGTERM" : signal));
  return new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      stopGroups(groups);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}
