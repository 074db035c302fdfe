// The Worker built the way `wrangler deploy` bundles it (`wrangler deploy --dry-run --outdir`), for
// workerd to serve (scripts/serve-worker.mjs). `npm start` builds it while the D1 migrations run.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const WRANGLER = path.join(ROOT, "node_modules", ".bin", "wrangler");
export const WRANGLER_CONFIG = path.join(ROOT, "wrangler.toml");

/**
 * The exact bundle a deploy would upload, into `buildDir` (a directory of the caller's own: two
 * stacks may build at once). Its stdout (the upload summary) is not wanted; warnings go to stderr.
 * @returns {{ command: string, args: string[], env: Record<string, string> }}
 */
export function buildCommand(buildDir) {
  return {
    command: WRANGLER,
    args: ["deploy", "--dry-run", "--outdir", buildDir, "--config", WRANGLER_CONFIG],
    env: {
      WRANGLER_SEND_METRICS: "false",
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      WRANGLER_HIDE_BANNER: "true",
      WRANGLER_LOG: "warn",
    },
  };
}

/** Builds into `buildDir`; throws if wrangler fails. */
export async function buildWorker(buildDir) {
  const { command, args, env } = buildCommand(buildDir);
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const code = await new Promise((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`wrangler deploy --dry-run failed (exit code ${code})`);
}
