// Runs one assignment through the runner's AgentProcess (the real CLI as a child process) and keeps
// what it streamed: transcript events and each output stream's text.
import { writeFileSync } from "node:fs";
import path from "node:path";
import type { RunAssignment, RunSkill } from "../../../bridge/src/protocol/runner.ts";
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

export const PROTOCOL = "PROTOCOL-MARKER: GET http://edge.test/api/agents/me, then check out.";
export const INSTRUCTIONS = "INSTRUCTIONS-MARKER: you are the release engineer.";

/** A company skill every run carries: the CLI lists its name and description to the model. */
export const SKILL: RunSkill = {
  key: "company/release-notes",
  slug: "release-notes",
  name: "Release notes",
  description: "SKILL-DESC-MARKER: how this company writes release notes",
  content: "SKILL-BODY-MARKER: one line per change, newest first.",
};

/** The run's skill as the model was told of it: its name and description, anywhere in the request. */
export function sawSkill(request: unknown): boolean {
  const text = JSON.stringify(request);
  return text.includes(SKILL.slug) && text.includes(SKILL.description);
}

export interface CliUnderTest {
  adapterType: string;
  command: string;
  /** The vendor's base URL and dummy key, as the runner would pass them. */
  env: Record<string, string>;
  adapterConfig: Record<string, unknown>;
}

/**
 * A run of `cli` in `cwd` as the edge would assign it: the instructions file (under `root`), the
 * protocol and the skill carry markers the fake model looks for; `config` adds to the adapter's
 * options.
 */
export function cliAssignment(
  root: string,
  cli: CliUnderTest,
  cwd: string,
  overrides: Partial<RunAssignment> = {},
  config: Record<string, unknown> = {},
): RunAssignment {
  const instructions = path.join(root, "instructions.md");
  writeFileSync(instructions, INSTRUCTIONS);
  return {
    runId: `run-${Math.random().toString(36).slice(2, 8)}`,
    agentId: "agent-1",
    adapterType: cli.adapterType,
    command: cli.command,
    args: [],
    cwd,
    prompt: "Do the task.",
    timeoutSec: 60,
    env: { HOME: path.join(root, "home"), PLATFORM_RUN_ID: "run-under-test", ...cli.env },
    adapterConfig: { instructionsFilePath: instructions, ...cli.adapterConfig, ...config },
    protocol: PROTOCOL,
    skills: [SKILL],
    ...overrides,
  };
}
