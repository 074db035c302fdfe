// Wake → CLI process start, through the real runner (bridge/src/runner/agent-runner.ts) in this
// process: a fake edge on a loopback WebSocket hands it one run at a time, stamped when the frame is
// sent; the runner's onProcessGroup callback, called right after spawn() returns the child's pid,
// stamps the start. The baseline stamps a bare child_process.spawn of the same command the same way.
import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { tsImport } from "tsx/esm/api";
import { WebSocketServer } from "ws";
import { now } from "./common.mjs";

const COMMAND = "true";
const RUN_TIMEOUT_MS = 30_000;

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
 * baseline, interleaved so that both see the same load on a shared machine); `workspace` gives each
 * run's cwd and issue. Returns both sets of samples (ms) and how many runs did not exit 0.
 */
export async function runnerSpawns(count, workspace) {
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
      const run = {
        runId: `bench-${i}`,
        agentId: "bench-agent",
        adapterType: "process",
        command: COMMAND,
        args: [],
        prompt: "",
        timeoutSec: 60,
        env: {},
        ...workspace,
      };
      const sent = now();
      const finish = await edge.hand(run);
      if (finish.exitCode !== 0 || spawned === null) failed++;
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
