/**
 * Which agent CLIs this runner can start, their versions and the models they list: each adapter's
 * program asked for `--version` (and, where the CLI can say, its models) with the environment agents
 * get, once when the runner starts. Reported in the hello so the runner list shows it and the models
 * route offers what the company's runners really have (a run of a missing CLI still fails with how
 * to install it).
 */
import { spawn } from "node:child_process";
import { CLI_MODELS_MAX } from "../protocol/runner.ts";
import { adapterPrograms } from "./adapters/index.ts";
import type { ModelListing } from "./adapters/types.ts";
import { INHERITED_ENV } from "./config.ts";

/**
 * Gemini CLI relaunches itself before it answers `--version`: 8-10 s on a loaded two-core machine
 * with the other CLIs probed at the same time. A shorter limit would report it missing.
 */
const PROBE_TIMEOUT_MS = 30_000;
/** OpenCode starts its server and database before it lists anything: seconds on a loaded machine. */
const MODELS_TIMEOUT_MS = 30_000;
const OUTPUT_MAX_CHARS = 4 * 1024 * 1024;

export interface FoundCli {
  adapterType: string;
  command: string;
  /** The first line of its `--version`; null when it is not installed (or does not answer). */
  version: string | null;
  /** The models the CLI lists, for CLIs that can list them and did. */
  models?: string[];
}

/** The program's standard output when it exits 0 within the time; null otherwise. */
function outputOf(
  command: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<string | null> {
  return new Promise((resolve) => {
    let out = "";
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "ignore"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      out += text;
      if (out.length > OUTPUT_MAX_CHARS) child.kill("SIGKILL");
    });
    child.once("error", () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve(code === 0 && out.length <= OUTPUT_MAX_CHARS ? out : null);
    });
  });
}

async function versionOf(command: string, env: Record<string, string>): Promise<string | null> {
  const out = await outputOf(command, ["--version"], env, PROBE_TIMEOUT_MS);
  const line = out?.trim().split("\n")[0]?.trim() ?? "";
  return line ? line.slice(0, 200) : null;
}

async function modelsOf(
  command: string,
  listing: ModelListing,
  env: Record<string, string>,
): Promise<string[]> {
  const out = await outputOf(command, listing.args, { ...env, ...listing.env }, MODELS_TIMEOUT_MS);
  if (out === null) return [];
  const ids = listing.parse(out).filter((id) => id.length <= 200);
  return [...new Set(ids)].slice(0, CLI_MODELS_MAX);
}

const agentEnv = (source: NodeJS.ProcessEnv): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) if (source[name] !== undefined) env[name] = source[name] as string;
  return env;
};

/** Each adapter's CLI and its version (quick: the hello waits for this). */
export async function probeClis(source: NodeJS.ProcessEnv = process.env): Promise<FoundCli[]> {
  const env = agentEnv(source);
  return Promise.all(
    adapterPrograms().map(async ({ adapterType, command }) => ({
      adapterType,
      command,
      version: await versionOf(command, env),
    })),
  );
}

/**
 * The found CLIs with the models each lists, where it can (slower: OpenCode starts a server first;
 * the runner reports them in a second hello rather than hold its first claim for them).
 */
export async function withModels(
  found: readonly FoundCli[],
  source: NodeJS.ProcessEnv = process.env,
): Promise<FoundCli[]> {
  const env = agentEnv(source);
  const listings = new Map(adapterPrograms().map((program) => [program.adapterType, program.models]));
  return Promise.all(
    found.map(async (cli) => {
      const listing = listings.get(cli.adapterType);
      if (cli.version === null || !listing) return cli;
      const models = await modelsOf(cli.command, listing, env);
      return models.length > 0 ? { ...cli, models } : cli;
    }),
  );
}
