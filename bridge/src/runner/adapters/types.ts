/**
 * What an adapter is: the one place that knows a CLI. It turns a run into a command line, an
 * environment and the text for standard input; reads the CLI's output stream, line by line, into
 * transcript events, the CLI's session id, token usage and cost; and judges how the run ended. The
 * runner does everything else (working directory, process group, timeout, cancel, output frames,
 * retrying a rejected session afresh), the same for every CLI.
 *
 * Adapters for CLIs with a line-oriented JSON stream fit as is: Claude Code (`--output-format
 * stream-json`), Codex (`exec --json`), Gemini CLI (`--output-format stream-json`), OpenCode
 * (`run --format json`). A CLI that reports tokens but no cost prices them in its parser.
 */
import type { RunAssignment } from "../../protocol/runner.ts";
import type { TranscriptEvent } from "../../protocol/transcript.ts";
import type { Meter } from "./pricing.ts";

/** A configuration the adapter cannot run: the run fails with this message, nothing is started. */
export class AdapterConfigError extends Error {}

export interface LaunchContext {
  readonly run: RunAssignment;
  /** The run's working directory (it exists). */
  readonly cwd: string;
  /**
   * A directory of this run's own, outside cwd, that the agent's OS user can read; removed after the
   * run. For files the CLI is pointed at (a system prompt file, …).
   */
  readonly runDir: string;
  /**
   * The HOME the agent's process gets (the run's env, else RUNNER_RUN_AS's home, else the runner's):
   * where the CLI keeps its own state unless the adapter points it elsewhere.
   */
  readonly home: string;
  /** The CLI session to resume, already checked to have been made in this cwd; null: start fresh. */
  readonly resume: string | null;
  /**
   * Reads a file with the agent's own permissions (as RUNNER_RUN_AS when set): a path from the
   * agent's configuration must never reach what only the runner may read (its token file).
   */
  readFileAsAgent(path: string): Promise<string>;
}

export interface Launch {
  command: string;
  args: string[];
  /** Under the run's environment (adapterConfig.env and PLATFORM_* win over these). */
  env: Record<string, string>;
  /**
   * Over the run's environment: where the adapter redirects the CLI's own lookups (Codex's HOME for
   * its skills), handing the real values on to the agent's commands in the CLI's own way.
   */
  overrideEnv?: Record<string, string>;
  stdin: string;
  /**
   * Written (mode 0600, owned by the agent's user) before the process starts; missing directories
   * under the run's directory are made (mode 0700, the agent's).
   */
  files: ReadonlyArray<{ path: string; content: string }>;
  /** Symbolic links made after the files; a missing target directory is made first (the agent's). */
  links?: ReadonlyArray<{ path: string; target: string }>;
  /** For CLIs that report tokens but no cost: how the parser prices them (pricing.ts). */
  meter?: Meter;
  /** The run's budget in cents (RunAssignment.budgetCents), for a parser that sees cost mid-run. */
  budgetCents?: number;
  /**
   * The launch resumes a CLI session: a figure the CLI reports as the session's running total is not
   * the run's own.
   */
  resumed?: boolean;
}

export interface StreamSummary {
  /** The CLI's session id, as soon as the stream named it. */
  sessionId?: string;
  /**
   * Stored on the run; the edge's cost event reads provider, model, inputTokens, cachedInputTokens
   * and outputTokens from it (workers/control/runs/lifecycle.ts).
   */
  usage?: Record<string, unknown>;
  costCents?: number;
  /** The CLI's final report arrived (a stream without one was cut short or was not the CLI's). */
  sawResult: boolean;
  /** The CLI reported failure in its own words. */
  resultError?: string;
  /**
   * The run reached the budget it was given (RunAssignment.budgetCents): the CLI stopped itself
   * (Claude Code), or a parser that sees the cost grow mid-run says so and the runner stops the
   * process group (OpenCode, per step).
   */
  budgetExceeded?: boolean;
  /** The first line that was not the stream the adapter expects, for the failure message. */
  garbage?: string;
}

export interface StreamParser {
  /** One complete line of standard output, without its newline: the events it holds. */
  line(text: string): TranscriptEvent[];
  summary(): StreamSummary;
}

/** How the process ended, as the runner saw it. */
export interface ProcessEnd {
  exitCode: number | null;
  /** The last few KiB of standard error. */
  stderrTail: string;
}

export type Verdict =
  | { ok: true }
  /** `reason` undefined: the edge says "exit code N". */
  | { ok: false; reason?: string }
  /** The CLI refused the session it was told to resume: the runner starts it again without one. */
  | { ok: false; sessionRejected: true; reason: string };

/** How the runner asks a CLI for the models it knows (once, when it starts). */
export interface ModelListing {
  args: string[];
  env?: Record<string, string>;
  /** The model ids in the CLI's output, in its order; [] when it says nothing usable. */
  parse(stdout: string): string[];
}

export interface Adapter {
  readonly type: string;
  /** The CLI it starts when adapterConfig.command is not set, and how to install it. */
  readonly program: { command: string; name: string; install: string; models?: ModelListing } | null;
  /** Whether the adapter resumes CLI sessions (the runner then reports them to the edge). */
  readonly resumes: boolean;
  /** Throws AdapterConfigError for a configuration it cannot run. */
  launch(context: LaunchContext): Promise<Launch>;
  /** A parser for one launch's output (the launch carries what pricing needs). */
  parser(launch: Launch): StreamParser;
  verdict(end: ProcessEnd, summary: StreamSummary): Verdict;
}
