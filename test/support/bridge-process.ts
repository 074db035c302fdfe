// Starts a real bridge process (`node --import tsx bridge/src/main.ts`) against a running stack, for suites
// that need several bridges or need to kill one.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { ApiClient } from "./api.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface BridgeProcess {
  readonly id: string;
  readonly child: ChildProcess;
  /** Lines the bridge logged (JSON). */
  readonly lines: string[];
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** The bootstrap token: it opens the bridge link as "local-bridge" only. */
export function devVarsToken(): string {
  const text = readFileSync(path.join(REPO_ROOT, ".dev.vars"), "utf8");
  return /^BRIDGE_TOKEN=(.*)$/m.exec(text)?.[1]?.trim() ?? "";
}

/** Each bridge needs its own credential, created by the SUPERADMIN (`api` must be one). */
export async function createBridgeCredential(api: ApiClient, id: string): Promise<string> {
  const res = await api.call<{ data: { token: string } }>("POST", "/api/bridges", { id });
  if (res.status !== 201)
    throw new Error(`bridge credential for ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.token;
}

/** Starts bridge `id` with `token` (createBridgeCredential; devVarsToken() for "local-bridge"). */
export function startBridgeProcess(
  baseUrl: string,
  id: string,
  token: string,
  extraEnv: Record<string, string> = {},
): BridgeProcess {
  // One process, tsx as a loader: the `tsx` CLI would run the bridge as ITS child, and a SIGKILL to
  // the wrapper would orphan a bridge that goes on holding its sessions (no real failover).
  const child = spawn(process.execPath, ["--import", "tsx", "bridge/src/main.ts"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      EDGE_URL: baseUrl,
      BRIDGE_TOKEN: token,
      BRIDGE_ID: id,
      SIMULATOR: "1",
      MEDIA_ALLOW_PRIVATE: "1",
      // Suites wait for its info lines ("fleet link open").
      LOG_LEVEL: "info",
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
