/** The runner's settings, from its environment, validated once at start. */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { toWebSocketUrl } from "../shared/edge-url.ts";
import { DEFAULT_LOG_LEVEL, LOG_LEVELS, type LogLevelSetting } from "../shared/log.ts";

/**
 * What the runner keeps of the environment it was started with, and what agent processes inherit
 * from it: enough to find programs and speak the user's language, nothing secret.
 */
export const INHERITED_ENV = ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "TERM", "SYSTEMROOT"];
/** The runner's own settings (never handed to agent processes). */
const SETTINGS = ["EDGE_URL", "RUNNER_SLOTS", "RUNNER_WORK_DIR", "STATE_DIR", "RUNNER_RUN_AS", "LOG_LEVEL"];
/** Set on the runner re-executed with a clean environment (see clean-launch.ts). */
export const CLEAN_MARK = "SWITCHBOARD_RUNNER_CLEAN";
export const KEPT_ENV = new Set([...INHERITED_ENV, ...SETTINGS, CLEAN_MARK]);

const EnvSchema = z.object({
  EDGE_URL: z
    .string({ error: "EDGE_URL is required (the edge's http(s):// or ws(s):// address)" })
    .trim()
    .pipe(z.url({ protocol: /^(https?|wss?)$/, error: "EDGE_URL must be an http, https, ws or wss URL" })),
  RUNNER_SLOTS: z.coerce.number().int().min(1).max(64).default(2),
  RUNNER_WORK_DIR: z.string().trim().min(1).optional(),
  RUNNER_RUN_AS: z.string().trim().min(1).max(64).optional(),
  RUNNER_TOKEN_FILE: z.string().trim().min(1).optional(),
  STATE_DIR: z.string().trim().min(1).optional(),
  LOG_LEVEL: z
    .enum(LOG_LEVELS, { error: `LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}` })
    .default(DEFAULT_LOG_LEVEL),
});

/** The OS identity agent processes run as, when it is not the runner's own. */
export interface RunAs {
  user: string;
  uid: number;
  gid: number;
  home: string;
}

export interface RunnerConfig {
  /** ws:// or wss:// origin of the edge, without a trailing slash. */
  edgeUrl: string;
  slots: number;
  /**
   * Each agent without a cwd works in `<workDir>/<agent id>`; issues' git worktrees are made in
   * `<workDir>/worktrees`. See defaultWorkDir.
   */
  workDir: string;
  runAs: RunAs | null;
  /** Where to read the token from; undefined: standard input. */
  tokenFile: string | undefined;
  /** Which log lines are written (LOG_LEVEL, default warn). */
  logLevel: LogLevelSetting;
}

/** `RUNNER_RUN_AS=<user>`: its uid, gid and home, from the system's user database. */
export function resolveRunAs(user: string): RunAs {
  const id = (flag: string) => Number(execFileSync("id", [flag, user], { encoding: "utf8" }).trim());
  const home = execFileSync("getent", ["passwd", user], { encoding: "utf8" }).split(":")[5] ?? "/";
  return { user, uid: id("-u"), gid: id("-g"), home };
}

/** The checkout this runner runs from (bridge/src/runner/ is three levels down). */
const CHECKOUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/**
 * Without RUNNER_WORK_DIR: `<STATE_DIR>/runner`, next to the local D1 database of the stack this
 * checkout runs, and `.wrangler/state/runner` in the checkout when STATE_DIR is unset (wrangler's own
 * default state dir), so deleting the state dir cleans the runner too and two clones never share work
 * folders. State, not a cache (a worktree holds an agent's uncommitted work), and not under /tmp by
 * default, where some CLIs (gemini) refuse to work.
 */
export function defaultWorkDir(stateDir: string | undefined): string {
  return path.join(stateDir ? path.resolve(stateDir) : path.join(CHECKOUT, ".wrangler", "state"), "runner");
}

/** Throws an Error listing every problem (without echoing values). */
export function loadRunnerConfig(env: Record<string, string | undefined>): RunnerConfig {
  if (env.RUNNER_TOKEN !== undefined)
    throw new Error(
      "RUNNER_TOKEN is refused: every agent process could read it from /proc/<runner>/environ. " +
        "Pipe the token on standard input, or name a file only the runner's user can read in RUNNER_TOKEN_FILE.",
    );
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success)
    throw new Error(`invalid runner configuration: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  const { EDGE_URL, RUNNER_SLOTS, RUNNER_WORK_DIR, RUNNER_RUN_AS, RUNNER_TOKEN_FILE, STATE_DIR, LOG_LEVEL } =
    parsed.data;
  return {
    edgeUrl: toWebSocketUrl(EDGE_URL),
    slots: RUNNER_SLOTS,
    workDir: path.resolve(RUNNER_WORK_DIR ?? defaultWorkDir(STATE_DIR)),
    runAs: RUNNER_RUN_AS ? resolveRunAs(RUNNER_RUN_AS) : null,
    tokenFile: RUNNER_TOKEN_FILE,
    logLevel: LOG_LEVEL,
  };
}
