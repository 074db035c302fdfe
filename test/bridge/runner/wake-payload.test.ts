// A run's wake payload (a routine webhook's body, RunAssignment.wakePayload) reaches the agent's
// process as a file in the run's own directory, named by PLATFORM_WAKE_PAYLOAD_PATH, readable by the
// agent's user only and gone when the run ends; a run without one gets neither the file nor the var.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunAssignment } from "../../../bridge/src/protocol/runner.ts";
import { executeRun } from "./execute-run.ts";

const workDir = mkdtempSync(path.join(tmpdir(), "wake-payload-test-"));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** Prints what the agent sees: the variable, the file's mode and text. */
const SCRIPT = `
const fs = require("node:fs");
const file = process.env.PLATFORM_WAKE_PAYLOAD_PATH;
console.log(JSON.stringify({
  file: file ?? null,
  mode: file ? (fs.statSync(file).mode & 0o777).toString(8) : null,
  text: file ? fs.readFileSync(file, "utf8") : null,
}));`;

const assignment = (runId: string, wakePayload?: string): RunAssignment => ({
  runId,
  agentId: "agent-1",
  adapterType: "process",
  command: process.execPath,
  args: ["-e", SCRIPT],
  cwd: null,
  prompt: "",
  timeoutSec: 30,
  env: { PLATFORM_RUN_ID: runId },
  ...(wakePayload === undefined ? {} : { wakePayload }),
});

describe("the wake payload on the runner", () => {
  it("is a private file named by PLATFORM_WAKE_PAYLOAD_PATH while the run lasts", async () => {
    const payload = '{"event":"deploy","ref":"main"}';
    const run = await executeRun(assignment("run-payload", payload), workDir);
    expect(run.outcome, run.stderr).toMatchObject({ exitCode: 0 });
    const seen = JSON.parse(run.stdout.trim()) as { file: string; mode: string; text: string };
    expect(seen.text).toBe(payload);
    expect(seen.mode).toBe("600");
    expect(seen.file).toBe(path.join(workDir, ".runs", "run-payload", "wake-payload.json"));
    expect(existsSync(seen.file)).toBe(false);
  });

  it("a run without a payload has no file and no variable", async () => {
    const run = await executeRun(assignment("run-plain"), workDir);
    expect(JSON.parse(run.stdout.trim())).toEqual({ file: null, mode: null, text: null });
  });
});
