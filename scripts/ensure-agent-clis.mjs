#!/usr/bin/env node
// Part of `npm test`: the suites that prove the agent adapters run the real CLIs (Claude Code …)
// against a local fake model server. Installs each pinned package from scripts/agent-clis.json with
// `npm install --prefix <dir>/<name>` into a cache outside the project's node_modules (default
// ~/.cache/switchboard/agent-clis, or AGENT_CLIS_DIR), and does nothing when the pinned version is
// there and answers `--version`, so a second run costs a second. One prefix per CLI: a `--no-save`
// install into a shared prefix prunes the packages an earlier install put there.
//   node scripts/ensure-agent-clis.mjs          install what is missing
//   node scripts/ensure-agent-clis.mjs --print  print the directory
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const MANIFEST = JSON.parse(readFileSync(path.join(ROOT, "scripts", "agent-clis.json"), "utf8"));
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const dir = path.resolve(process.env.AGENT_CLIS_DIR || MANIFEST.defaultDir.replace(/^~(?=\/)/, homedir()));

if (process.argv.includes("--print")) {
  console.log(dir);
  process.exit(0);
}

const prefixOf = (cli) => path.join(dir, cli.name);
const packageDir = (cli) => path.join(prefixOf(cli), "node_modules", ...cli.package.split("/"));
const binPath = (cli) => path.join(prefixOf(cli), "node_modules", ".bin", cli.bin);

function installedVersion(cli) {
  try {
    return JSON.parse(readFileSync(path.join(packageDir(cli), "package.json"), "utf8")).version;
  } catch {
    return undefined;
  }
}

/** The binary runs and says the pinned version (a placeholder left by a skipped postinstall does not). */
function answers(cli) {
  if (!existsSync(binPath(cli))) return false;
  const result = spawnSync(binPath(cli), ["--version"], { encoding: "utf8", timeout: 30_000 });
  return result.status === 0 && result.stdout.includes(cli.version);
}

function run(command, args, cwd) {
  console.log(`$ ${command} ${args.join(" ")}`);
  return spawnSync(command, args, { cwd, stdio: "inherit" }).status === 0;
}

function ensure(cli) {
  const spec = `${cli.package}@${cli.version}`;
  if (installedVersion(cli) === cli.version && answers(cli)) {
    console.log(`agent CLIs: ${spec} is installed in ${prefixOf(cli)}`);
    return true;
  }
  mkdirSync(prefixOf(cli), { recursive: true });
  const flags = [
    "--prefix",
    prefixOf(cli),
    "--no-save",
    "--no-package-lock",
    "--no-audit",
    "--no-fund",
    // `npm test` exports the project's engine-strict to children; these are test fixtures with engines
    // of their own (Claude Code declares node >=22 and runs its native binary on 20), judged by
    // `answers()` below instead.
    "--engine-strict=false",
  ];
  if (!run(NPM, ["install", ...flags, spec], prefixOf(cli))) return false;
  // npm may hold back install scripts; the package's own postinstall puts the native binary in place.
  if (!answers(cli) && existsSync(path.join(packageDir(cli), "install.cjs")))
    run(process.execPath, ["install.cjs"], packageDir(cli));
  if (!answers(cli)) {
    console.error(`agent CLIs: ${binPath(cli)} does not answer --version with ${cli.version}`);
    return false;
  }
  console.log(`agent CLIs: installed ${spec} in ${prefixOf(cli)}`);
  return true;
}

const ok = MANIFEST.clis.map(ensure).every(Boolean);
process.exit(ok ? 0 : 1);
