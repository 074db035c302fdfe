// The adapter interface: every adapterType the edge knows maps to one adapter (the legacy types and
// unknown ones to `process`), the process adapter starts the configured command as before, and the
// runner hands an adapter's parser whole lines however the output was chunked.
import { describe, expect, it } from "vitest";
import type { RunAssignment } from "../../../bridge/src/protocol/runner.ts";
import { adapterFor, adapterPrograms, LineSplitter } from "../../../bridge/src/runner/adapters/index.ts";

const run: RunAssignment = {
  runId: "run-1",
  agentId: "agent-1",
  adapterType: "process",
  command: "node",
  args: ["agent.mjs", "--fast"],
  cwd: null,
  prompt: "do the thing",
  timeoutSec: 30,
  env: {},
};

describe("adapters", () => {
  it("maps each adapter type to its adapter; legacy and unknown types run as process", () => {
    expect(adapterFor("claude_local").type).toBe("claude_local");
    for (const type of ["process", "coder_local", "assistant_local", "something_new"])
      expect(adapterFor(type).type, type).toBe("process");
    expect(adapterPrograms()).toContainEqual(
      expect.objectContaining({ adapterType: "claude_local", command: "claude" }),
    );
  });

  it("process starts adapterConfig.command with its args and the prompt on stdin, and writes no files", async () => {
    const launch = await adapterFor("process").launch({
      run,
      cwd: "/tmp",
      runDir: "/tmp/run",
      home: "/tmp/home",
      resume: null,
      readFileAsAgent: () => Promise.reject(new Error("not used")),
    });
    expect(launch).toEqual({
      command: "node",
      args: ["agent.mjs", "--fast"],
      env: {},
      stdin: "do the thing",
      files: [],
    });
  });

  it("process: exit 0 succeeds, anything else fails with the edge's own wording", () => {
    const adapter = adapterFor("process");
    const summary = adapter.parser({ command: "x", args: [], env: {}, stdin: "", files: [] }).summary();
    expect(adapter.verdict({ exitCode: 0, stderrTail: "" }, summary)).toEqual({ ok: true });
    expect(adapter.verdict({ exitCode: 3, stderrTail: "boom" }, summary)).toEqual({ ok: false });
  });

  it("hands over whole lines: split chunks are joined, CRLF trimmed, a last unterminated line flushed", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line));
    for (const chunk of ['{"a":', '1}\n{"b"', ":2}\r\n\n", "tail"]) splitter.push(chunk);
    expect(lines).toEqual(['{"a":1}', '{"b":2}', ""]);
    splitter.end();
    expect(lines.at(-1)).toBe("tail");
  });
});
