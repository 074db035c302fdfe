// Runs one assignment through the runner's AgentProcess (the real CLI as a child process) and keeps
// what it streamed: transcript events and each output stream's text.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, expect } from "vitest";
import type { RunAssignment, RunSession, RunSkill } from "../../../bridge/src/protocol/runner.ts";
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

/** One CLI's scratch root (removed after its tests), with runs and fresh working directories under it. */
export function cliTestBed(root: string) {
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  return {
    execute: (run: RunAssignment) => executeRun(run, root),
    freshCwd: () => mkdtempSync(path.join(root, "cwd-")),
  };
}

/** The first run's shell command succeeded and wrote its marker in the run's cwd. */
export function expectMarkerWritten(run: Awaited<ReturnType<typeof executeRun>>, cwd: string): void {
  expect(run.outcome.error, `${run.stdout}\n${run.stderr}`).toBeUndefined();
  expect(run.outcome).toMatchObject({ exitCode: 0, timedOut: false });
  expect(readFileSync(path.join(cwd, "marker.txt"), "utf8").trim()).toBe("ran-run-under-test");
}

export type Assign = (
  cwd: string,
  overrides?: Partial<RunAssignment>,
  config?: Record<string, unknown>,
) => RunAssignment;

/** The run with its CLI swapped for a script (under `root`) that says `greeting` and exits 0. */
export function impostorRun(root: string, assignment: Assign, cwd: string, greeting: string): RunAssignment {
  const impostor = path.join(root, "impostor.sh");
  writeFileSync(impostor, `#!/bin/sh\necho '${greeting}'\nexit 0\n`, { mode: 0o755 });
  return assignment(cwd, {}, { command: impostor });
}

/** The run with no adapterConfig.command and nothing on its PATH: the CLI is not installed. */
export function missingCliRun(assignment: Assign, cwd: string): RunAssignment {
  const run = assignment(cwd, {}, { command: undefined });
  return { ...run, env: { ...run.env, PATH: "/nonexistent" } };
}

const SECOND_WAKE = "This is the second wake.";

/**
 * A first run in `cwd`, then a second wake that resumes its session: both succeed, the second in the
 * same session. (`config` adds to the second run's adapter options.)
 */
export async function firstAndResumedRuns(
  execute: (run: RunAssignment) => ReturnType<typeof executeRun>,
  assignment: Assign,
  cwd: string,
  config: Record<string, unknown> = {},
) {
  const first = await execute(assignment(cwd));
  expect(first.outcome.error, first.stderr).toBeUndefined();
  expect(first.outcome.resumed).toBe(false);
  const session = first.outcome.session as RunSession;
  const second = await execute(assignment(cwd, { prompt: SECOND_WAKE, session }, config));
  expect(second.outcome.error, second.stderr).toBeUndefined();
  expect(second.outcome.session).toEqual(session);
  // What the edge records on the run (resumed), so a run says it continued the earlier one.
  expect(second.outcome.resumed).toBe(true);
  return { first, second, session };
}

/** A wake told to resume a session the CLI does not know (`goneId`): it succeeds in a fresh one. */
export async function rejectedSessionRun(
  execute: (run: RunAssignment) => ReturnType<typeof executeRun>,
  assignment: Assign,
  cwd: string,
  goneId: string,
) {
  const fresh = await execute(assignment(cwd, { prompt: SECOND_WAKE, session: { id: goneId, cwd } }));
  expect(fresh.outcome.error, fresh.stderr).toBeUndefined();
  expect(fresh.outcome.session?.id).not.toBe(goneId);
  expect(fresh.outcome.resumed).toBe(false);
  return fresh;
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
