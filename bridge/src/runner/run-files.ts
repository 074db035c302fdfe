/**
 * The files of a run: its working directory, the private directory its adapter writes files into
 * (owned by the agent's OS user, removed after the run), and reading a file the agent's configuration
 * names with the agent's own permissions, never the runner's.
 */
import { spawn } from "node:child_process";
import { chownSync, existsSync, mkdirSync } from "node:fs";
import { chown, lchown, mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { RunAssignment } from "../protocol/runner.ts";
import type { RunAs } from "./config.ts";

/** Instructions files and the like are small; a larger one is refused rather than read whole. */
const READ_MAX_BYTES = 1024 * 1024;

/** The run's working directory: its configured cwd, or a directory of the agent's own. */
export function workingDirectory(
  run: RunAssignment,
  options: { workDir: string; runAs: RunAs | null },
): string {
  if (run.cwd) return run.cwd;
  const dir = path.join(options.workDir, run.agentId);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (options.runAs) chownSync(dir, options.runAs.uid, options.runAs.gid);
  return dir;
}

export async function prepareRunDir(runDir: string, runAs: RunAs | null): Promise<void> {
  await mkdir(path.dirname(runDir), { recursive: true, mode: 0o711 });
  await mkdir(runDir, { recursive: true, mode: 0o700 });
  if (runAs) await chown(runDir, runAs.uid, runAs.gid);
}

/** Makes `dir` and its missing parents (mode 0700), each owned by the agent's user. */
async function ensureDir(dir: string, runAs: RunAs | null): Promise<void> {
  if (existsSync(dir)) return;
  await ensureDir(path.dirname(dir), runAs);
  await mkdir(dir, { mode: 0o700 });
  if (runAs) await chown(dir, runAs.uid, runAs.gid);
}

export async function writeRunFiles(
  files: ReadonlyArray<{ path: string; content: string }>,
  runAs: RunAs | null,
): Promise<void> {
  for (const file of files) {
    await ensureDir(path.dirname(file.path), runAs);
    await writeFile(file.path, file.content, { mode: 0o600 });
    if (runAs) await chown(file.path, runAs.uid, runAs.gid);
  }
}

/** Links `path` to `target`, making the target directory first when it is missing (the agent's). */
export async function makeRunLinks(
  links: ReadonlyArray<{ path: string; target: string }>,
  runAs: RunAs | null,
): Promise<void> {
  for (const link of links) {
    await ensureDir(link.target, runAs);
    await ensureDir(path.dirname(link.path), runAs);
    // A retry without the rejected session launches again into the same run directory.
    await rm(link.path, { force: true });
    await symlink(link.target, link.path);
    if (runAs) await lchown(link.path, runAs.uid, runAs.gid);
  }
}

/**
 * The file's text, read as the agent's user: directly when agents run as the runner's own user
 * (they could read it themselves), else through `cat` started as RUNNER_RUN_AS, so a path in the
 * agent's configuration cannot make the runner read what only it may (its token file).
 */
export async function readFileAs(file: string, runAs: RunAs | null): Promise<string> {
  if (!runAs) {
    const text = await readFile(file, "utf8");
    if (Buffer.byteLength(text) > READ_MAX_BYTES) throw new Error(`${file} is larger than 1 MiB`);
    return text;
  }
  return new Promise((resolve, reject) => {
    const child = spawn("cat", ["--", file], {
      uid: runAs.uid,
      gid: runAs.gid,
      env: { PATH: "/usr/bin:/bin" },
    });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      out += text;
      if (out.length > READ_MAX_BYTES) child.kill("SIGKILL");
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      err += text;
    });
    child.once("error", reject);
    child.once("close", (code) => {
      if (out.length > READ_MAX_BYTES) reject(new Error(`${file} is larger than 1 MiB`));
      else if (code === 0) resolve(out);
      else reject(new Error(err.trim() || `${file} cannot be read as ${runAs.user}`));
    });
  });
}
