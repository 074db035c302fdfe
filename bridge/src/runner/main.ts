/**
 * A runner: `npm run runner` (`node --import tsx bridge/src/runner/main.ts`). It executes the agent
 * runs of the companies its token serves, on this machine. The token comes on standard input (or from
 * the file RUNNER_TOKEN_FILE names), never from the environment: see docs/security.md.
 *
 *   npm run runner < ~/.config/switchboard/runner-token      # EDGE_URL=https://… in the environment
 *
 * On SIGTERM/SIGINT it stops its agent processes and closes its link (the edge fails what was still
 * running and releases the issues), then exits 0.
 */
import { readFileSync } from "node:fs";
import { installFaultGuard } from "../shared/fault-guard.ts";
import { errorMessage, jsonLog, type Log } from "../shared/log.ts";
import { AgentRunner } from "./agent-runner.ts";
import { type GroupReport, isCleanProcess, launchClean } from "./clean-launch.ts";
import { loadRunnerConfig } from "./config.ts";

const SHUTDOWN_GRACE_MS = 8_000;
/** Warnings and errors until the configuration names LOG_LEVEL (a bad configuration is an error). */
let log: Log = jsonLog();

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY)
    throw new Error(
      "no token: pipe it on standard input (npm run runner < token-file) or set RUNNER_TOKEN_FILE",
    );
  let text = "";
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}

async function readToken(tokenFile: string | undefined): Promise<string> {
  const token = (tokenFile ? readFileSync(tokenFile, "utf8") : await readStdin()).trim();
  if (!token.startsWith("swr_")) throw new Error("that is not a runner token (they start with swr_)");
  return token;
}

const report = (message: GroupReport) => {
  if (process.connected) process.send?.(message);
};

async function runRunner(token: string): Promise<void> {
  const config = loadRunnerConfig(process.env);
  log = jsonLog({ level: config.logLevel });
  // One stray rejection must not end every agent run this runner holds (the bridge's guard, same code).
  installFaultGuard({ log, secrets: [token] });
  const runner = new AgentRunner({
    ...config,
    token,
    log,
    onProcessGroup: (pgid, live) => report({ type: "group", pgid, live }),
  });
  let stopping = false;
  const shutdown = (why: string) => {
    if (stopping) return;
    stopping = true;
    log("info", "runner stopping", { why });
    setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
    runner.shutdown().then(
      () => process.exit(0),
      (error: unknown) => {
        log("error", "runner shutdown failed", { error: errorMessage(error) });
        process.exit(0);
      },
    );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
  // The launching process died: nobody is left to relay signals, so stop like on SIGTERM.
  process.on("disconnect", () => shutdown("launcher gone"));
  runner.start();
}

async function main(): Promise<void> {
  const config = loadRunnerConfig(process.env);
  const token = await readToken(config.tokenFile);
  if (isCleanProcess(process.env)) return runRunner(token);
  process.exitCode = await launchClean(token);
}

main().catch((error: unknown) => {
  log("error", "runner failed to start", { error: errorMessage(error) });
  process.exit(1);
});
