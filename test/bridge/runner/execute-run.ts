// Runs one assignment through the runner's AgentProcess (the real CLI as a child process) and keeps
// what it streamed: transcript events and each output stream's text.
import type { RunAssignment } from "../../../bridge/src/protocol/runner.ts";
import type { TranscriptEvent } from "../../../bridge/src/protocol/transcript.ts";
import { AgentProcess } from "../../../bridge/src/runner/agent-process.ts";

export async function executeRun(run: RunAssignment, workDir: string) {
  const events: TranscriptEvent[] = [];
  const output: Array<{ stream: string; text: string }> = [];
  const outcome = await new AgentProcess(run, {
    workDir,
    runAs: null,
    onOutput: (stream, text) => output.push({ stream, text }),
    onEvent: (event) => events.push(event),
  }).start();
  const text = (stream: string) =>
    output
      .filter((o) => o.stream === stream)
      .map((o) => o.text)
      .join("");
  return { outcome, events, stdout: text("stdout"), system: text("system"), stderr: text("stderr") };
}
