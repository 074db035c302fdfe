// The runner's child process, for real: environment (an allowlist plus PLATFORM_* in, the runner's
// own variables out), prompt on stdin, output in order, usage from the PLATFORM_USAGE line, a process
// group of its own that timeout and stop end as a whole, a working directory per agent, a start that
// waits until the runner lets the CLI start (and none after a stop), and spawn failures.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunAssignment } from "../../../bridge/src/protocol/runner.ts";
import { AgentProcess, type ProcessOutcome } from "../../../bridge/src/runner/agent-process.ts";
import { resolveRunAs } from "../../../bridge/src/runner/config.ts";

const workDir = mkdtempSync(path.join(tmpdir(), "agent-process-test-"));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

function assignment(script: string, overrides: Partial<RunAssignment> = {}): RunAssignment {
  return {
    runId: "run-1",
    agentId: "agent-1",
    adapterType: "coder_local",
    command: process.execPath,
    args: ["-e", script],
    cwd: null,
    prompt: "do the thing",
    timeoutSec: 30,
    env: { PLATFORM_RUN_ID: "run-1", PLATFORM_API_KEY: "swa_secret" },
    ...overrides,
  };
}

function start(run: RunAssignment) {
  const output: Array<{ stream: string; text: string }> = [];
  const groups: Array<{ pgid: number; live: boolean }> = [];
  const agent = new AgentProcess(run, {
    workDir,
    runAs: null,
    onOutput: (stream, text) => output.push({ stream, text }),
    onProcessGroup: (pgid, live) => groups.push({ pgid, live }),
  });
  return { agent, output, groups, done: agent.start() };
}

async function run(run: RunAssignment) {
  const { output, groups, done } = start(run);
  const outcome: ProcessOutcome = await done;
  const stdout = output
    .filter((o) => o.stream === "stdout")
    .map((o) => o.text)
    .join("");
  return { outcome, output, stdout, groups };
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(probe: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("AgentProcess", () => {
  it("passes an allowlisted environment and the run's, never the runner's own, and the prompt on stdin", async () => {
    process.env.BRIDGE_TOKEN = "bridge-secret";
    process.env.SOME_RUNNER_SECRET = "runner-secret";
    const script = `
      let input = "";
      process.stdin.on("data", (d) => (input += d)).on("end", () => {
        console.log(JSON.stringify({ env: process.env, input }));
      });`;
    const { outcome, stdout } = await run(assignment(script));
    expect(outcome).toMatchObject({ exitCode: 0, timedOut: false });
    const seen = JSON.parse(stdout) as { env: Record<string, string>; input: string };
    expect(seen.input).toBe("do the thing");
    expect(seen.env.PLATFORM_RUN_ID).toBe("run-1");
    expect(seen.env.PATH).toBe(process.env.PATH);
    const allowed = new Set(["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "TERM", "SYSTEMROOT"]);
    const extra = Object.keys(seen.env).filter((name) => !allowed.has(name) && !name.startsWith("PLATFORM_"));
    // Node itself may add nothing; anything else came from the runner.
    expect(extra).toEqual([]);
  });

  it("works in a directory of the agent's own unless the run names one", async () => {
    const { stdout } = await run(assignment("console.log(process.cwd())"));
    expect(stdout.trim()).toBe(path.join(workDir, "agent-1"));
    const named = await run(assignment("console.log(process.cwd())", { cwd: tmpdir() }));
    expect(named.stdout.trim()).toBe(tmpdir());
  });

  it("reports usage and cost from the last PLATFORM_USAGE line, and the exit code", async () => {
    const script = `
      console.log('PLATFORM_USAGE {"costCents":1}');
      console.error("a warning");
      console.log('PLATFORM_USAGE {"costCents":12,"inputTokens":3}');
      process.exit(4);`;
    const { outcome, output } = await run(assignment(script));
    expect(outcome).toEqual({
      exitCode: 4,
      timedOut: false,
      usage: { costCents: 12, inputTokens: 3 },
      costCents: 12,
    });
    expect(output).toContainEqual({ stream: "stderr", text: "a warning\n" });
  });

  it("times out the whole process group: `sh -c 'sleep 300 & wait'` ends within seconds, sleep included", async () => {
    const pidFile = path.join(workDir, "sleep.pid");
    const began = Date.now();
    const { outcome, output, groups } = await run(
      assignment("", {
        command: "sh",
        args: ["-c", `sleep 300 & echo $! > ${pidFile}; wait`],
        timeoutSec: 1,
      }),
    );
    expect(outcome.timedOut).toBe(true);
    expect(Date.now() - began).toBeLessThan(8_000);
    expect(output.some((o) => o.stream === "system" && o.text.includes("timeout after 1s"))).toBe(true);
    const sleepPid = Number(readFileSync(pidFile, "utf8"));
    await until(() => !alive(sleepPid), 2_000);
    expect(groups.map((g) => g.live)).toEqual([true, false]);
  });

  it("stop() ends a running run's group, and a background process left behind dies with the run", async () => {
    const pidFile = path.join(workDir, "left.pid");
    const { agent, done } = start(
      assignment("", { command: "sh", args: ["-c", `sleep 300 & echo $! > ${pidFile}; sleep 300`] }),
    );
    await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", 5_000);
    agent.stop();
    const outcome = await done;
    expect(outcome.exitCode).toBeNull();
    await until(() => !alive(Number(readFileSync(pidFile, "utf8"))), 2_000);

    const leftover = path.join(workDir, "leftover.pid");
    await run(assignment("", { command: "sh", args: ["-c", `sleep 300 & echo $! > ${leftover}; exit 0`] }));
    await until(() => !alive(Number(readFileSync(leftover, "utf8"))), 2_000);
  });

  it("waits for `ready` before starting the CLI, and never starts one stopped meanwhile", async () => {
    const marker = path.join(workDir, "started.txt");
    const options = (ready: Promise<unknown>, groups: number[]) => ({
      workDir,
      runAs: null,
      onOutput: () => undefined,
      onProcessGroup: (pgid: number, live: boolean) => live && groups.push(pgid),
      ready,
    });
    const touch = assignment("", { command: "sh", args: ["-c", `echo started >> ${marker}`] });

    let release = () => {};
    const groups: number[] = [];
    const waiting = new AgentProcess(touch, options(new Promise<void>((r) => (release = r)), groups));
    const done = waiting.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(marker)).toBe(false);
    release();
    expect(await done).toMatchObject({ exitCode: 0 });
    expect(readFileSync(marker, "utf8")).toBe("started\n");
    expect(groups).toHaveLength(1);

    let cancelRelease = () => {};
    const none: number[] = [];
    const cancelled = new AgentProcess(touch, options(new Promise<void>((r) => (cancelRelease = r)), none));
    const ended = cancelled.start();
    cancelled.stop();
    cancelRelease();
    expect(await ended).toEqual({ exitCode: null, timedOut: false });
    expect(none).toEqual([]);
    expect(readFileSync(marker, "utf8")).toBe("started\n");
  });

  // RUNNER_RUN_AS needs a runner that may change user: root here, as in CI.
  it.runIf(process.getuid?.() === 0)(
    "RUNNER_RUN_AS runs the agent as that user, who cannot read the runner's files",
    async () => {
      const shared = mkdtempSync(path.join(tmpdir(), "agent-process-runas-"));
      chmodSync(shared, 0o755);
      const secretFile = path.join(shared, "runner-token");
      writeFileSync(secretFile, "swr_secret", { mode: 0o600 });
      const runAs = resolveRunAs("nobody");
      const script = `
      const fs = require("node:fs");
      let read = "refused";
      try { read = fs.readFileSync(${JSON.stringify(secretFile)}, "utf8"); } catch {}
      console.log(JSON.stringify({ uid: process.getuid(), home: process.env.HOME, read, cwd: process.cwd() }));`;
      const output: string[] = [];
      const outcome = await new AgentProcess(assignment(script), {
        workDir: shared,
        runAs,
        onOutput: (stream, text) => stream === "stdout" && output.push(text),
      }).start();
      rmSync(shared, { recursive: true, force: true });
      expect(outcome.exitCode, JSON.stringify(outcome)).toBe(0);
      expect(JSON.parse(output.join(""))).toEqual({
        uid: runAs.uid,
        home: runAs.home,
        read: "refused",
        cwd: path.join(shared, "agent-1"),
      });
    },
  );

  it("reports a command that cannot start as an error instead of throwing", async () => {
    const { outcome } = await run(assignment("", { command: "/nonexistent/agent-binary", args: [] }));
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.error).toMatch(
      /^command not found: \/nonexistent\/agent-binary does not exist on this runner/,
    );
  });
});
