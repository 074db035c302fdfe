// A run that cannot start fails with a reason naming the real cause and the fix, as the edge receives
// it: the real AgentRunner on a real link to a stand-in dispatcher (a WebSocket on 127.0.0.1), its
// runs real child processes. Node alone reports a missing working folder, a missing program and a
// missing #! interpreter all as `spawn <command> ENOENT`.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import type { RunAssignment, RunnerFrame } from "../../../bridge/src/protocol/runner.ts";
import { AgentRunner } from "../../../bridge/src/runner/agent-runner.ts";
import { type RunAs, resolveRunAs } from "../../../bridge/src/runner/config.ts";

type Finish = Extract<RunnerFrame, { type: "finish" }>;
type Dispatcher = ReturnType<typeof standInDispatcher>;

const TOKEN = "swr_launch-failures-test";
const root = mkdtempSync(path.join(tmpdir(), "launch-failures-"));
const workDir = path.join(root, "work");
/** A PATH folder that exists and holds nothing: a bare command looked up there is missing. */
const emptyBin = path.join(root, "empty-bin");
mkdirSync(emptyBin);

/** The dispatcher's end of the link: hands out queued runs on `claim`, keeps each run's finish. */
function standInDispatcher() {
  const queued: RunAssignment[] = [];
  const finishes = new Map<string, (finish: Finish) => void>();
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  let socket: WebSocket | null = null;
  const hand = () => {
    const run = queued.shift();
    if (run && socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "run", run }));
  };
  server.on("upgrade", (req, duplex, head) => {
    if (req.url !== "/runner/v1/link" || req.headers.authorization !== `Bearer ${TOKEN}`) {
      duplex.destroy();
      return;
    }
    wss.handleUpgrade(req, duplex, head, (ws) => {
      socket = ws;
      ws.on("message", (data) => {
        const text = data.toString();
        if (text === "ping") return ws.send("pong");
        const frame = JSON.parse(text) as RunnerFrame;
        if (frame.type === "claim") hand();
        if (frame.type === "finish") finishes.get(frame.runId)?.(frame);
      });
    });
  });
  return {
    server,
    /** Queues the run, nudges the runner, and resolves with the finish it sends. */
    finishOf(run: RunAssignment): Promise<Finish> {
      const finished = new Promise<Finish>((resolve) => finishes.set(run.runId, resolve));
      queued.push(run);
      if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "nudge" }));
      return finished;
    },
    close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.close();
    },
  };
}

/** A real AgentRunner on its own link to a stand-in dispatcher, stopped after the file. */
function linkedRunner(runAs: RunAs | null) {
  const dispatcher = standInDispatcher();
  let runner: AgentRunner | null = null;
  beforeAll(async () => {
    await new Promise<void>((resolve) => dispatcher.server.listen(0, "127.0.0.1", resolve));
    const { port } = dispatcher.server.address() as AddressInfo;
    runner = new AgentRunner({
      edgeUrl: `ws://127.0.0.1:${port}`,
      token: TOKEN,
      slots: 1,
      workDir,
      runAs,
      log: () => undefined,
    });
    runner.start();
  });
  afterAll(async () => {
    await runner?.shutdown();
    dispatcher.close();
  });
  return dispatcher;
}

afterAll(() => rmSync(root, { recursive: true, force: true }));

let runs = 0;
function assignment(overrides: Partial<RunAssignment>): RunAssignment {
  runs += 1;
  return {
    runId: `run-${runs}`,
    agentId: "agent-1",
    adapterType: "process",
    command: "node",
    args: ["-e", "process.exit(0)"],
    cwd: null,
    prompt: "do the thing",
    timeoutSec: 30,
    env: { PLATFORM_RUN_ID: `run-${runs}` },
    ...overrides,
  };
}

const reasonWith = async (dispatcher: Dispatcher, overrides: Partial<RunAssignment>) => {
  const finish = await dispatcher.finishOf(assignment(overrides));
  expect(finish.exitCode).toBeNull();
  return finish.error ?? "";
};

describe("a run that cannot start names the cause and the fix", () => {
  const dispatcher = linkedRunner(null);
  const reasonFor = (overrides: Partial<RunAssignment>) => reasonWith(dispatcher, overrides);

  it("a working folder that does not exist: the folder, not `spawn node ENOENT`", async () => {
    const missing = path.join(root, "srv", "app");
    const reason = await reasonFor({ cwd: missing });
    expect(reason).toBe(
      `working folder missing: ${missing} does not exist on this runner: create it, or point the agent's ` +
        "adapterConfig.cwd (or the project workspace's cwd) at a folder that exists on this runner " +
        `(mkdir -p ${missing})`,
    );
  });

  it("a working folder that is a file", async () => {
    const file = path.join(root, "a-file");
    writeFileSync(file, "not a folder");
    expect(await reasonFor({ cwd: file })).toMatch(
      new RegExp(`^working folder missing: ${file} is a file, not a folder: .*adapterConfig\\.cwd`),
    );
  });

  it("a command that is not on the PATH: the command, the PATH searched, and the fix", async () => {
    const reason = await reasonFor({ command: "my-agent", env: { PATH: emptyBin } });
    expect(reason).toBe(
      `command not found: \`my-agent\` is not on the runner's PATH (${emptyBin}): install it there, ` +
        "or set adapterConfig.command to its full path",
    );
  });

  it("a command path that does not exist", async () => {
    const gone = path.join(root, "bin", "agent.sh");
    expect(await reasonFor({ command: gone })).toMatch(
      new RegExp(`^command not found: ${gone} does not exist on this runner: fix adapterConfig\\.command`),
    );
  });

  it("a CLI adapter whose CLI is not installed: the CLI, the PATH searched, how to install it", async () => {
    const reason = await reasonFor({
      adapterType: "claude_local",
      command: "claude",
      args: [],
      adapterConfig: {},
      env: { PATH: emptyBin },
    });
    expect(reason).toBe(
      `Claude Code is not installed on this runner (\`claude\` is not on its PATH: ${emptyBin}): ` +
        "npm install -g @anthropic-ai/claude-code; or set adapterConfig.command to its full path",
    );
  });

  it("a command that is not executable: permission denied, and chmod +x", async () => {
    const script = path.join(root, "not-executable.sh");
    writeFileSync(script, "#!/bin/sh\nexit 0\n");
    chmodSync(script, 0o644);
    expect(await reasonFor({ command: script, args: [] })).toBe(
      `command not executable: ${script} may not be run (permission denied): make it executable ` +
        `(chmod +x ${script}), or set adapterConfig.command to a program the agent's user may run`,
    );
  });

  it("a script whose #! interpreter is missing: the interpreter, not the script", async () => {
    const script = path.join(root, "orphan.sh");
    writeFileSync(script, "#!/nonexistent/interpreter\nexit 0\n", { mode: 0o755 });
    expect(await reasonFor({ command: script, args: [] })).toBe(
      `command cannot start: ${script} is a script for \`/nonexistent/interpreter\`, which is not on this ` +
        "runner: install it, or fix the script's #! line",
    );
  });

  it("a command that starts still runs as before", async () => {
    const cwd = path.join(root, "works");
    mkdirSync(cwd);
    const finish = await dispatcher.finishOf(assignment({ cwd }));
    expect(finish).toMatchObject({ exitCode: 0, timedOut: false });
    expect(finish.error).toBeUndefined();
  });
});

// RUNNER_RUN_AS needs a runner that may change user: root here, as in CI. The runner's own checks
// pass as root; the agent's user is refused by the kernel, and the reason says whose access it lacks.
describe.runIf(process.getuid?.() === 0)("as RUNNER_RUN_AS's user", () => {
  const dispatcher = linkedRunner(resolveRunAs("nobody"));

  it("a program only the runner's user may run: permission denied, naming the agents' user", async () => {
    const rootOnly = path.join(root, "root-only.sh");
    writeFileSync(rootOnly, "#!/bin/sh\nexit 0\n", { mode: 0o700 });
    const cwd = path.join(root, "shared");
    mkdirSync(cwd, { mode: 0o755 });
    expect(await reasonWith(dispatcher, { command: rootOnly, args: [], cwd })).toBe(
      `permission denied: the agents' OS user nobody (RUNNER_RUN_AS) may not run ${rootOnly} or enter ${cwd}: ` +
        "give that user access (read and execute on the folder and every folder above it, execute on the " +
        "program), or set adapterConfig.command / adapterConfig.cwd to ones it may use",
    );
  });
});
