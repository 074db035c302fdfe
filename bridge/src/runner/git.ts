/**
 * The few git commands the runner's workspaces need, run as the agents' OS user (RUNNER_RUN_AS) so
 * the worktrees and their metadata belong to whoever will commit in them, with a clean environment
 * (no GIT_DIR or the like from the runner's own) and never waiting for a password prompt.
 */
import { execFile } from "node:child_process";
import { INHERITED_ENV, type RunAs } from "./config.ts";

const GIT_TIMEOUT_MS = 60_000;

export class GitError extends Error {}

function gitEnv(runAs: RunAs | null): Record<string, string> {
  const env: Record<string, string> = { GIT_TERMINAL_PROMPT: "0" };
  for (const name of INHERITED_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  if (runAs) env.HOME = runAs.home;
  return env;
}

/** git's standard output; rejects with its standard error (a GitError) when it exits non-zero. */
export function git(cwd: string, args: string[], runAs: RunAs | null): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      args,
      {
        cwd,
        env: gitEnv(runAs),
        timeout: GIT_TIMEOUT_MS,
        encoding: "utf8",
        ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
      },
      (error, stdout, stderr) => {
        if (!error) resolve(stdout);
        else reject(new GitError(`git ${args[0]}: ${stderr.trim() || error.message}`));
      },
    );
  });
}

/** The repository `dir` is in: its top level and dir's path below it; null when it is not in one. */
export async function repositoryOf(
  dir: string,
  runAs: RunAs | null,
): Promise<{ toplevel: string; prefix: string } | null> {
  try {
    const [toplevel = "", prefix = ""] = (
      await git(dir, ["rev-parse", "--show-toplevel", "--show-prefix"], runAs)
    ).split("\n");
    return toplevel ? { toplevel, prefix } : null;
  } catch {
    // Not a repository, a bare one, a missing directory: the run works in dir as it is.
    return null;
  }
}

export async function branchExists(repo: string, branch: string, runAs: RunAs | null): Promise<boolean> {
  try {
    await git(repo, ["show-ref", "--verify", "--quiet", `refs/heads/${branch}`], runAs);
    return true;
  } catch {
    return false;
  }
}
