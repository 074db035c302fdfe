/**
 * Why a run's process cannot start, in words that name the cause and the fix. The kernel's answer to
 * a failed spawn is one errno for several causes (ENOENT for a missing working folder, a missing
 * program and a missing #! interpreter alike, which Node reports as `spawn <command> ENOENT`), so the
 * runner looks first: the working folder is checked before anything is prepared in it, the command
 * is resolved on the PATH the process would get, and a spawn that fails anyway is explained by
 * looking again.
 */
import { constants } from "node:fs";
import { access, open, stat } from "node:fs/promises";
import path from "node:path";
import type { Adapter } from "./adapters/index.ts";

/** A run that cannot start: the message is its failure reason, as the run's page shows it. */
export class LaunchError extends Error {}

export interface LaunchTarget {
  command: string;
  /** The folder the process starts in (it was checked to exist). */
  cwd: string;
  /** The process's environment: its PATH is where a bare command is looked up. */
  env: Record<string, string>;
  /** The adapter's CLI, when the command is that CLI's default name (not adapterConfig.command). */
  program: Adapter["program"];
  /** RUNNER_RUN_AS's user, when agents run as another OS user than the runner's (whose checks these are). */
  runAsUser: string | null;
}

/** What execvp falls back to when the environment has no PATH. */
const DEFAULT_PATH = "/usr/bin:/bin";
const PATH_SHOWN_MAX_CHARS = 600;

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

async function canExecute(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function kindOf(file: string): Promise<"file" | "folder" | "missing" | "unreachable"> {
  try {
    return (await stat(file)).isDirectory() ? "folder" : "file";
  } catch (error) {
    const code = errnoOf(error);
    return code === "ENOENT" || code === "ENOTDIR" ? "missing" : "unreachable";
  }
}

/** Throws a LaunchError when `cwd` is not a folder the run can start in. */
export async function checkWorkingFolder(cwd: string): Promise<void> {
  const fix =
    "create it, or point the agent's adapterConfig.cwd (or the project workspace's cwd) at a folder that exists on this runner";
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(cwd);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ENOENT")
      throw new LaunchError(
        `working folder missing: ${cwd} does not exist on this runner: ${fix} (mkdir -p ${cwd})`,
      );
    if (code === "ENOTDIR")
      throw new LaunchError(`working folder missing: part of ${cwd} is a file, not a folder: ${fix}`);
    if (code === "EACCES")
      throw new LaunchError(
        `working folder not readable: a folder above ${cwd} may not be entered (permission denied): ` +
          "let the runner's user in (chmod o+x on the folders above), or set adapterConfig.cwd elsewhere",
      );
    throw new LaunchError(`working folder ${cwd} cannot be used: ${(error as Error).message}`);
  }
  if (!info.isDirectory())
    throw new LaunchError(`working folder missing: ${cwd} is a file, not a folder: ${fix}`);
  try {
    await access(cwd, constants.R_OK | constants.X_OK);
  } catch {
    throw new LaunchError(
      `working folder not readable: ${cwd} may not be entered or read by the runner's user (permission denied): ` +
        `give it access (chmod u+rx ${cwd}, or chown it), or set adapterConfig.cwd elsewhere`,
    );
  }
}

function shownPath(env: Record<string, string>): string {
  const value = env.PATH ?? DEFAULT_PATH;
  return value.length > PATH_SHOWN_MAX_CHARS ? `${value.slice(0, PATH_SHOWN_MAX_CHARS)}…` : value;
}

function notFound(target: LaunchTarget): LaunchError {
  const { command, program, env } = target;
  const searched = shownPath(env);
  if (program && command === program.command)
    return new LaunchError(
      `${program.name} is not installed on this runner (\`${command}\` is not on its PATH: ${searched}): ` +
        `${program.install}; or set adapterConfig.command to its full path`,
    );
  return new LaunchError(
    `command not found: \`${command}\` is not on the runner's PATH (${searched}): install it there, ` +
      "or set adapterConfig.command to its full path",
  );
}

const notExecutable = (file: string): LaunchError =>
  new LaunchError(
    `command not executable: ${file} may not be run (permission denied): make it executable ` +
      `(chmod +x ${file}), or set adapterConfig.command to a program the agent's user may run`,
  );

/** The file a command names, or a LaunchError saying why there is none that can run. */
async function resolveCommand(target: LaunchTarget): Promise<string> {
  const { command, cwd, env } = target;
  if (command.includes("/")) {
    const file = path.resolve(cwd, command);
    const kind = await kindOf(file);
    if (kind === "missing")
      throw new LaunchError(
        `command not found: ${file} does not exist on this runner: fix adapterConfig.command (or install it there)`,
      );
    if (kind === "folder")
      throw new LaunchError(
        `command not found: ${file} is a folder, not a program: fix adapterConfig.command`,
      );
    if (kind === "file" && !(await canExecute(file))) throw notExecutable(file);
    return file;
  }
  let refused: string | null = null;
  for (const dir of (env.PATH ?? DEFAULT_PATH).split(":")) {
    const file = path.resolve(cwd, dir, command);
    if ((await kindOf(file)) !== "file") continue;
    if (await canExecute(file)) return file;
    refused ??= file;
  }
  throw refused ? notExecutable(refused) : notFound(target);
}

/** Throws a LaunchError when the command cannot be found or run; checked before the process starts. */
export async function checkCommand(target: LaunchTarget): Promise<void> {
  await resolveCommand(target);
}

/** The interpreter a script's `#!` line names, if it has one. */
async function interpreterOf(file: string): Promise<string | null> {
  try {
    const handle = await open(file, "r");
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(256), 0, 256, 0);
      const line = buffer.subarray(0, bytesRead).toString("utf8").split("\n")[0] ?? "";
      return line.startsWith("#!") ? line.slice(2).trim() : null;
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}

/** Why the spawn failed with `code` though the checks before it passed (something changed, or deeper). */
export async function explainSpawnError(
  target: LaunchTarget,
  error: { code: string | undefined; message: string },
): Promise<string> {
  try {
    await checkWorkingFolder(target.cwd);
    const file = await resolveCommand(target);
    if (error.code === "ENOENT") {
      const interpreter = await interpreterOf(file);
      if (interpreter)
        return `command cannot start: ${file} is a script for \`${interpreter}\`, which is not on this runner: install it, or fix the script's #! line`;
    }
    if (error.code === "EACCES") {
      // The checks above passed as the runner's user: the agent's own may lack what it has.
      const who = target.runAsUser
        ? `the agents' OS user ${target.runAsUser} (RUNNER_RUN_AS)`
        : "the runner's user";
      return (
        `permission denied: ${who} may not run ${file} or enter ${target.cwd}: give that user access ` +
        "(read and execute on the folder and every folder above it, execute on the program), " +
        "or set adapterConfig.command / adapterConfig.cwd to ones it may use"
      );
    }
    return `command cannot start: ${file}: ${error.message}`;
  } catch (launchError) {
    if (launchError instanceof LaunchError) return launchError.message;
    return `command cannot start: ${error.message}`;
  }
}
