// Starts a real runner process (`node --import tsx bridge/src/runner/main.ts`) against a running
// stack, its token on standard input as the README says, for suites that need a runner of their own.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface RunnerProcess {
  readonly child: ChildProcess;
  /** Lines the runner logged (JSON). */
  readonly lines: string[];
  readonly workDir: string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

export function startRunnerProcess(
  baseUrl: string,
  token: string,
  extraEnv: Record<string, string> = {},
): RunnerProcess {
  // A work dir of the caller's (RUNNER_WORK_DIR), e.g. one outside /tmp for CLIs that refuse it there.
  const workDir = extraEnv.RUNNER_WORK_DIR ?? mkdtempSync(path.join(tmpdir(), "switchboard-runner-e2e-"));
  // The test's own environment on purpose: the runner must not pass any of it on to agents.
  const child = spawn(process.execPath, ["--import", "tsx", "bridge/src/runner/main.ts"], {
    cwd: REPO_ROOT,
    env: { ...process.env, EDGE_URL: baseUrl, RUNNER_WORK_DIR: workDir, RUNNER_SLOTS: "2", ...extraEnv },
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin?.end(`${token}\n`);
  const lines: string[] = [];
  const collect = (chunk: Buffer) => lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    lines,
    workDir,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
