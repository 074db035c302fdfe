/**
 * Which agent CLIs this runner can start, and their versions: each adapter's program asked for
 * `--version` with the environment agents get, once when the runner starts. Reported in the hello so
 * the runner list shows it (a run of a missing CLI still fails with how to install it).
 */
import { spawn } from "node:child_process";
import { adapterPrograms } from "./adapters/index.ts";
import { INHERITED_ENV } from "./config.ts";

const PROBE_TIMEOUT_MS = 10_000;

export interface FoundCli {
  adapterType: string;
  command: string;
  /** The first line of its `--version`; null when it is not installed (or does not answer). */
  version: string | null;
}

function versionOf(command: string, env: Record<string, string>): Promise<string | null> {
  return new Promise((resolve) => {
    let out = "";
    const child = spawn(command, ["--version"], { env, stdio: ["ignore", "pipe", "ignore"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), PROBE_TIMEOUT_MS);
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      out += text;
    });
    child.once("error", () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      const line = out.trim().split("\n")[0]?.trim() ?? "";
      resolve(code === 0 && line ? line.slice(0, 200) : null);
    });
  });
}

export async function probeClis(source: NodeJS.ProcessEnv = process.env): Promise<FoundCli[]> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) if (source[name] !== undefined) env[name] = source[name] as string;
  return Promise.all(
    adapterPrograms().map(async ({ adapterType, command }) => ({
      adapterType,
      command,
      version: await versionOf(command, env),
    })),
  );
}
