// The runner's child process, for real: environment (PLATFORM_* in, bridge secrets out), prompt on
// stdin, output in order, usage from the PLATFORM_USAGE line, the timeout kill, and spawn failures.
import { describe, expect, it } from "vitest";
import type { RunAssignment } from "../../../bridge/src/protocol/runner.ts";
import { AgentProcess } from "../../../bridge/src/runner/agent-process.ts";

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

async function run(run: RunAssignment) {
  const output: Array<{ stream: string; text: string }> = [];
  const outcome = await new AgentProcess(run, {
    onOutput: (stream, text) => output.push({ stream, text }),
  }).start();
  const stdout = output
    .filter((o) => o.stream === "stdout")
    .map((o) => o.text)
    .join("");
  return { outcome, output, stdout };
}

describe("AgentProcess", () => {
  it("passes the run's environment but not the bridge's secrets, and the prompt on stdin", async () => {
    process.env.BRIDGE_TOKEN = "bridge-secret";
    const script = `
      let input = "";
      process.stdin.on("data", (d) => (input += d)).on("end", () => {
        console.log(JSON.stringify({ run: process.env.PLATFORM_RUN_ID, token: process.env.BRIDGE_TOKEN ?? null, input }));
      });`;
    const { outcome, stdout } = await run(assignment(script));
    expect(outcome).toMatchObject({ exitCode: 0, timedOut: false });
    expect(JSON.parse(stdout)).toEqual({ run: "run-1", token: null, input: "do the thing" });
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

  it("stops a process that outlives its timeout and says so", async () => {
    const { outcome, output } = await run(assignment("setInterval(() => {}, 1000)", { timeoutSec: 1 }));
    expect(outcome.timedOut).toBe(true);
    expect(outcome.exitCode).toBeNull(); // killed by a signal
    expect(output.some((o) => o.stream === "system" && o.text.includes("timeout after 1s"))).toBe(true);
  });

  it("reports a command that cannot start as an error instead of throwing", async () => {
    const { outcome } = await run(assignment("", { command: "/nonexistent/agent-binary", args: [] }));
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.error).toMatch(/spawn failed/);
  });
});
