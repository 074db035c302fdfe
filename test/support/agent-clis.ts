// Where the real agent CLIs are for the suites that run them: installed, pinned, by
// scripts/ensure-agent-clis.mjs (a step of `npm test`) into AGENT_CLIS_DIR or the user's cache.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

interface Manifest {
  defaultDir: string;
  clis: Array<{ name: string; package: string; version: string; bin: string }>;
}

const manifest = (): Manifest =>
  JSON.parse(readFileSync(path.join(ROOT, "scripts", "agent-clis.json"), "utf8")) as Manifest;

export function agentClisDir(): string {
  const configured = process.env.AGENT_CLIS_DIR || manifest().defaultDir.replace(/^~(?=\/)/, homedir());
  return path.resolve(configured);
}

/** The pinned CLI's binary; throws (the suite fails, it is never skipped) when it is not installed. */
export function agentCli(name: string): { bin: string; version: string; binDir: string } {
  const cli = manifest().clis.find((entry) => entry.name === name);
  if (!cli) throw new Error(`scripts/agent-clis.json pins no CLI named ${name}`);
  // One npm prefix per CLI (scripts/ensure-agent-clis.mjs says why).
  const binDir = path.join(agentClisDir(), cli.name, "node_modules", ".bin");
  const bin = path.join(binDir, cli.bin);
  if (!existsSync(bin))
    throw new Error(`${cli.package}@${cli.version} is not installed: run node scripts/ensure-agent-clis.mjs`);
  return { bin, version: cli.version, binDir };
}
