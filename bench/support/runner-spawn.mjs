// Wake → CLI process start, through the real runner (bridge/src/runner/agent-runner.ts) in this
// process: a fake edge on a loopback WebSocket hands it one run at a time, stamped when the frame is
// sent; the runner's onProcessGroup callback, called right after spawn() returns the child's pid,
// stamps the start. The baseline stamps a bare child_process.spawn of `true` the same way.
//
// A `process` run of `true` is the runner's own overhead. A CLI adapter's run (cliRun) carries what the
// edge sends a real agent (an instructions file, the platform's protocol and its skill) so the
// adapter prepares its launch in full (system prompt, instructions, skill and settings files, its
// config, Codex's and Gemini's run homes), with adapterConfig.command a stub that prints what the real
// CLI printed (runner-streams.mjs): the stub stands in for the process, not for the preparation.
import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { tsImport } from "tsx/esm/api";
import { WebSocketServer } from "ws";
import { now } from "./common.mjs";
import { capturedStream } from "./runner-streams.mjs";

const COMMAND = "true";
const RUN_TIMEOUT_MS = 30_000;
const API_URL = "http://127.0.0.1:8787/api";

/** The `process` adapter starting `true`: nothing to prepare. */
export const processRun = () => ({ adapterType: "process", command: COMMAND, args: [], env: {} });

/**
 * A run of `adapterType` as the edge assigns a real agent's, its CLI a stub (under `dir`, which also
 * holds the instructions file and the agent's HOME) that prints the real CLI's captured output.
 */
export async function cliRun(adapterType, dir) {
  const { platformSkill } = await tsImport("../../workers/llms/platform-skill.ts", import.meta.url);
  const { heartbeatProtocolText, platformEnvText } = await tsImport(
    "../../workers/llms/protocol.ts",
    import.meta.url,
  );
  const stub = path.join(dir, `${adapterType}-stub.sh`);
  await writeFile(stub, `#!/bin/sh\ncat >/dev/null\ncat '${capturedStream(adapterType)}'\n`, { mode: 0o755 });
  const instructions = path.join(dir, "instructions.md");
  await writeFile(
    instructions,
    "You keep the release notes: one line per merged change, newest first.\n".repeat(20),
  );
  return {
    adapterType,
    command: adapterType.replace(/_local$/, ""),
    args: [],
    env: { HOME: path.join(dir, "home") },
    adapterConfig: {
      command: stub,
      instructionsFilePath: instructions,
      ...(adapterType === "opencode_local" ? { model: "openai/gpt-5-mini" } : {}),
    },
    protocol: `Your environment:\n${platformEnvText()}\n\n${heartbeatProtocolText(API_URL)}\n`,
    skills: [platformSkill(API_URL)],
  };
}

/** Spawn-to-pid of a bare `spawn(COMMAND)`, after the child exited. */
async function bareSpawn() {
  const started = now();
  const child = spawn(COMMAND, [], { stdio: "ignore" });
  const spawned = now() - started;
  await new Promise((resolve, reject) => child.once("exit", resolve).once("error", reject));
  return spawned;
}

/** A git repository with one commit: the project workspace of the worktree variant. */
export function gitRepository(dir) {
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: dir,
    GIT_AUTHOR_NAME: "Bench",
    GIT_AUTHOR_EMAIL: "bench@example.com",
    GIT_COMMITTER_NAME: "Bench",
    GIT_COMMITTER_EMAIL: "bench@example.com",
  };
  const repo = path.join(dir, "project");
  execFileSync("git", ["init", "-q", "-b", "main", repo], { env });
  execFileSync("git", ["commit", "-q", "--allow-empty", "-m", "first"], { cwd: repo, env });
  return repo;
}

/** The fake edge: accepts the runner's link, waits for its hello, hands out runs, sees finishes. */
async function fakeEdge() {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  const finishes = new Map();
  let hello;
  const connected = new Promise((resolve) => {
    hello = resolve;
  });
  let socket;
  server.on("connection", (ws) => {
    socket = ws;
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data));
      if (frame.type === "hello") hello();
      if (frame.type === "finish") finishes.get(frame.runId)?.(frame);
    });
  });
  return {
    url: `ws://127.0.0.1:${server.address().port}`,
    connected,
    /** Sends the run; resolves with its finish frame. */
    hand(run) {
      const finished = new Promise((resolve, reject) => {
        finishes.set(run.runId, resolve);
        setTimeout(() => reject(new Error(`run ${run.runId} did not finish`)), RUN_TIMEOUT_MS).unref();
      });
      socket.send(JSON.stringify({ type: "run", run }));
      return finished;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * `count` runs through a real AgentRunner, one at a time, each followed by a bare spawn (the
 * baseline, interleaved so that both see the same load on a shared machine); `run` is the run's
 * adapter, command and what it carries (processRun, cliRun), `workspace` its cwd and issue. Returns
 * both sets of samples (ms) and how many runs did not exit 0 or reported an error.
 */
export async function runnerSpawns(count, run, workspace) {
  const { AgentRunner } = await tsImport("../../bridge/src/runner/agent-runner.ts", import.meta.url);
  const workDir = await mkdtemp(path.join(tmpdir(), "switchboard-bench-runner-"));
  const edge = await fakeEdge();
  let spawned = null;
  const runner = new AgentRunner({
    edgeUrl: edge.url,
    token: "swr_bench",
    slots: 1,
    workDir,
    runAs: null,
    log: () => undefined,
    onProcessGroup: (_pgid, live) => {
      if (live && spawned === null) spawned = now();
    },
  });
  runner.start();
  try {
    await edge.connected;
    const samples = [];
    const bare = [];
    let failed = 0;
    for (let i = 0; i < count; i++) {
      spawned = null;
      const assignment = {
        runId: `bench-${i}`,
        agentId: "bench-agent",
        prompt: "You were mentioned on ENG-12: take it.",
        timeoutSec: 60,
        cwd: null,
        ...run,
        ...workspace,
      };
      const sent = now();
      const finish = await edge.hand(assignment);
      if (finish.exitCode !== 0 || finish.error || spawned === null) failed++;
      else samples.push(spawned - sent);
      bare.push(await bareSpawn());
    }
    return { samples, bare, failed };
  } finally {
    await runner.shutdown();
    await edge.close();
    await rm(workDir, { recursive: true, force: true });
  }
}
