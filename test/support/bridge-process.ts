// Starts a real bridge process (`node --import tsx bridge/src/main.ts`) against a running stack, for suites
// that need several bridges or need to kill one.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface BridgeProcess {
  readonly id: string;
  readonly child: ChildProcess;
  /** Lines the bridge logged (JSON). */
  readonly lines: string[];
  kill(signal: NodeJS.Signals): Promise<void>;
}

function devVarsToken(): string {
  const text = readFileSync(path.join(REPO_ROOT, ".dev.vars"), "utf8");
  return /^BRIDGE_TOKEN=(.*)$/m.exec(text)?.[1]?.trim() ?? "";
}

export function startBridgeProcess(
  baseUrl: string,
  id: string,
  extraEnv: Record<string, string> = {},
): BridgeProcess {
  // One process, tsx as a loader: the `tsx` CLI would run the bridge as ITS child, and a SIGKILL to
  // the wrapper would orphan a bridge that goes on holding its sessions (no real failover).
  const child = spawn(process.execPath, ["--import", "tsx", "bridge/src/main.ts"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      EDGE_URL: baseUrl,
      BRIDGE_TOKEN: devVarsToken(),
      BRIDGE_ID: id,
      SIMULATOR: "1",
      MEDIA_ALLOW_PRIVATE: "1",
      ...extraEnv,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    id,
    child,
    lines,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
