// A D1 database with every migration applied, made once per set of migrations and copied into each new
// stack's state directory. `wrangler d1 migrations apply` on an empty database costs about 7 s of CPU
// (every migration through Miniflare); on one that is up to date, about 1.3 s. start.mjs still runs it
// and finds nothing to apply, so such a stack boots the way a user's does on its second start; suites
// about the first start (start.test.ts, readme.test.ts) ask for an empty database instead.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const WRANGLER = path.join(REPO_ROOT, "node_modules", ".bin", "wrangler");
const CACHE_DIR = path.join(REPO_ROOT, "node_modules", ".cache", "switchboard-e2e");

/** Names the template after everything that decides its contents: the migrations and wrangler.toml. */
async function templateKey(): Promise<string> {
  const hash = createHash("sha256");
  const migrations = path.join(REPO_ROOT, "migrations");
  const files = (await readdir(migrations)).filter((name) => name.endsWith(".sql")).sort();
  for (const name of files) {
    hash.update(name).update(await readFile(path.join(migrations, name)));
  }
  hash.update(await readFile(path.join(REPO_ROOT, "wrangler.toml")));
  return hash.digest("hex").slice(0, 16);
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

async function applyMigrations(stateDir: string): Promise<void> {
  const child = spawn(WRANGLER, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", stateDir], {
    cwd: REPO_ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`wrangler d1 migrations apply failed (exit code ${code}):\n${stderr}`);
}

let template: Promise<string> | undefined;

/** The template's directory, made on first use (built aside, then renamed in: two runs may race). */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const dir = path.join(CACHE_DIR, `d1-${await templateKey()}`);
    if (await exists(dir)) return dir;
    await mkdir(CACHE_DIR, { recursive: true });
    const building = await mkdtemp(path.join(CACHE_DIR, "building-"));
    await applyMigrations(building);
    await rename(building, dir).catch(async (error: unknown) => {
      await rm(building, { recursive: true, force: true });
      if (!(await exists(dir))) throw error;
    });
    return dir;
  })();
  return template;
}

/** Copies the migrated database into `stateDir` (a fresh, empty state directory). */
export async function seedMigratedState(stateDir: string): Promise<void> {
  await cp(await migratedTemplate(), stateDir, { recursive: true });
}
