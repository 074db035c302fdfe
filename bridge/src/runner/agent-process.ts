/**
 * One heartbeat run: its adapter (adapters/) builds the command line, environment and standard input
 * and reads the CLI's output into transcript events, session, usage and cost; this runs it as a child
 * in a process group of its own (process-group.ts) with an allowlisted environment plus the run's,
 * streams its raw output in order, stops the whole group on timeout or cancel, and starts a CLI whose
 * session was rejected once more without it. Summarised on exit; never throws.
 */
import { rm } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { LOG_FRAME_MAX_CHARS, type RunAssignment, type RunSession } from "../protocol/runner.ts";
import type { TranscriptEvent } from "../protocol/transcript.ts";
import {
  type Adapter,
  AdapterConfigError,
  adapterFor,
  type Launch,
  LineSplitter,
  type StreamSummary,
  type Verdict,
} from "./adapters/index.ts";
import { INHERITED_ENV, type RunAs } from "./config.ts";
import { GitError } from "./git.ts";
import {
  checkCommand,
  checkWorkingFolder,
  explainSpawnError,
  LaunchError,
  type LaunchTarget,
} from "./launch-check.ts";
import { GroupChild } from "./process-group.ts";
import { makeRunLinks, prepareRunDir, readFileAs, workingDirectory, writeRunFiles } from "./run-files.ts";
import { type WorkspaceLease, type Workspaces, workspaceStrategy } from "./workspace.ts";

const STDERR_TAIL_CHARS = 4 * 1024;

export interface ProcessOutcome {
  exitCode: number | null;
  timedOut: boolean;
  error?: string;
  usage?: Record<string, unknown>;
  costCents?: number;
  /** The CLI session to resume next time (null: forget the one handed over); absent: no news. */
  session?: RunSession | null;
  /** The CLI ran in the session it was handed (resumed it) rather than a fresh one. */
  resumed?: boolean;
}

export interface ProcessOptions {
  /** Agents without adapterConfig.cwd work in `<workDir>/<agent id>`. */
  workDir: string;
  runAs: RunAs | null;
  /** Per-issue git worktrees of a cwd in a repository; absent: runs work in their cwd as it is. */
  workspaces?: Workspaces;
  onOutput(stream: "stdout" | "stderr" | "system", text: string): void;
  /** A transcript event the adapter read from the CLI's output (or the runner's own note). */
  onEvent?(event: TranscriptEvent): void;
  /** The run's process group exists (true) or is gone (false). */
  onProcessGroup?(pgid: number, live: boolean): void;
  /** Settles when the CLI may start (the runner is still asking it for its models); absent: at once. */
  ready?: Promise<unknown>;
}

/** What an agent inherits from the runner: enough to find programs, nothing secret. */
function inheritedEnv(runAs: RunAs | null): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  if (runAs) env.HOME = runAs.home;
  return env;
}

function failureMessage(error: unknown): string {
  if (error instanceof AdapterConfigError) return `configuration: ${error.message}`;
  if (error instanceof GitError) return `workspace: ${error.message}`;
  if (error instanceof LaunchError) return error.message;
  return String(error);
}

/** Splits text into frames no longer than the protocol allows. */
function* frames(text: string): Generator<string> {
  for (let at = 0; at < text.length; at += LOG_FRAME_MAX_CHARS)
    yield text.slice(at, at + LOG_FRAME_MAX_CHARS);
}

interface Attempt {
  exitCode: number | null;
  verdict: Verdict;
  summary: StreamSummary;
  error?: string;
}

export class AgentProcess {
  private child: GroupChild | null = null;
  private stopped = false;
  private timedOut = false;
  /** Stopped because the run reached its budget (StreamSummary.budgetExceeded). */
  private overBudget = false;
  private readonly adapter: Adapter;
  private readonly deadline: number;

  constructor(
    readonly run: RunAssignment,
    private readonly options: ProcessOptions,
  ) {
    this.adapter = adapterFor(run.adapterType);
    this.deadline = Date.now() + run.timeoutSec * 1000;
  }

  /** Runs to completion; never rejects (a spawn failure or a bad configuration is an outcome too). */
  async start(): Promise<ProcessOutcome> {
    const runDir = path.join(this.options.workDir, ".runs", this.run.runId);
    let workspace: WorkspaceLease | null = null;
    try {
      // Before git or the adapter look in it: a missing folder is named as such, not as a failed spawn.
      if (this.run.cwd) await checkWorkingFolder(this.run.cwd);
      workspace = await this.enterWorkspace();
      return await this.attempts(workspace.cwd, runDir);
    } catch (error) {
      this.note(`${failureMessage(error)}\n`);
      return { exitCode: null, timedOut: false, error: failureMessage(error) };
    } finally {
      workspace?.release();
      await rm(runDir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** The run's cwd: its issue's worktree when the cwd is in a git repository, else as configured. */
  private async enterWorkspace(): Promise<WorkspaceLease> {
    const { cwd, issue, adapterConfig } = this.run;
    const workspaces = this.options.workspaces;
    if (!cwd || !workspaces)
      return { cwd: workingDirectory(this.run, this.options), worktree: null, release: () => undefined };
    const lease = await workspaces.enter({ cwd, issue, strategy: workspaceStrategy(adapterConfig) });
    if (lease.worktree)
      this.options.onOutput("system", `working in ${lease.cwd} (branch ${lease.worktree.branch})\n`);
    return lease;
  }

  /** Stops the run's process group (cancel, the runner shutting down); no fresh retry follows. */
  stop(): void {
    this.stopped = true;
    this.child?.stop();
  }

  private async attempts(cwd: string, runDir: string): Promise<ProcessOutcome> {
    const resume = this.sessionToResume(cwd);
    let attempt = await this.attempt(cwd, runDir, resume);
    let forget = false;
    if ("sessionRejected" in attempt.verdict && resume && !this.stopped && !this.timedOut) {
      this.note(`${attempt.verdict.reason}: starting a fresh session\n`);
      forget = true;
      attempt = await this.attempt(cwd, runDir, null);
    }
    // Resumed: the CLI started (no spawn failure) in the session handed over and did not refuse it.
    const resumed = resume !== null && !forget && attempt.error === undefined;
    return { ...this.outcome(attempt, cwd, forget), ...(this.adapter.resumes ? { resumed } : {}) };
  }

  /**
   * The session handed over, unless it was made in another directory: its turns are about another
   * checkout's files, and of the pinned CLIs Claude Code and Gemini CLI would not find it, Codex would
   * resume it, and OpenCode would resume it and then never exit (their adapters' comments).
   */
  private sessionToResume(cwd: string): string | null {
    const session = this.run.session;
    if (!this.adapter.resumes || !session) return null;
    if (session.cwd === cwd) return session.id;
    this.note(
      `session ${session.id} was made in ${session.cwd}, this run works in ${cwd}: starting a fresh one\n`,
    );
    return null;
  }

  private async attempt(cwd: string, runDir: string, resume: string | null): Promise<Attempt> {
    const launch = await this.adapter.launch({
      run: this.run,
      cwd,
      runDir,
      home: this.agentHome(),
      resume,
      readFileAsAgent: (file) => readFileAs(file, this.options.runAs),
    });
    const payload = this.wakePayloadFile(runDir);
    const files = [...launch.files, ...(payload ? [payload] : [])];
    if (files.length > 0 || launch.links?.length) {
      await prepareRunDir(runDir, this.options.runAs);
      await writeRunFiles(files, this.options.runAs);
      await makeRunLinks(launch.links ?? [], this.options.runAs);
    }
    return this.execute(launch, cwd, payload ? { PLATFORM_WAKE_PAYLOAD_PATH: payload.path } : {});
  }

  /**
   * The payload of the routine run that woke the agent (a webhook's body), as a file in the run's own
   * directory: readable by the agent's user only, removed with the directory when the run ends.
   */
  private wakePayloadFile(runDir: string): { path: string; content: string } | null {
    const payload = this.run.wakePayload;
    if (payload === undefined || payload === null) return null;
    return { path: path.join(runDir, "wake-payload.json"), content: payload };
  }

  /** The HOME the agent's process gets: the run's own, else the one it inherits. */
  private agentHome(): string {
    return this.run.env.HOME || inheritedEnv(this.options.runAs).HOME || homedir();
  }

  private async execute(launch: Launch, cwd: string, runnerEnv: Record<string, string>): Promise<Attempt> {
    const parser = this.adapter.parser(launch);
    await this.options.ready;
    // Stopped (cancelled) while its workspace, files or the CLI were being readied: never started.
    if (this.stopped) return { exitCode: null, verdict: { ok: false }, summary: parser.summary() };
    const env = {
      ...inheritedEnv(this.options.runAs),
      ...launch.env,
      ...this.run.env,
      ...launch.overrideEnv,
      ...runnerEnv,
    };
    const target = this.launchTarget(launch, cwd, env);
    await checkCommand(target);
    const lines = new LineSplitter((line) => {
      for (const event of parser.line(line)) this.options.onEvent?.(event);
      this.stopOverBudget(parser.summary());
    });
    let stderrTail = "";
    this.child = new GroupChild(
      {
        command: launch.command,
        args: launch.args,
        cwd,
        env,
        stdin: launch.stdin,
        runAs: this.options.runAs,
      },
      {
        onStdout: (text) => {
          for (const part of frames(text)) this.options.onOutput("stdout", part);
          lines.push(text);
        },
        onStderr: (text) => {
          stderrTail = `${stderrTail}${text}`.slice(-STDERR_TAIL_CHARS);
          for (const part of frames(text)) this.options.onOutput("stderr", part);
        },
        onProcessGroup: this.options.onProcessGroup,
      },
    );
    const timer = this.startTimer();
    const end = await this.child.start();
    clearTimeout(timer);
    lines.end();
    const summary = parser.summary();
    if (end.spawnError)
      return {
        exitCode: null,
        verdict: { ok: false },
        summary,
        error: await explainSpawnError(target, end.spawnError),
      };
    return {
      exitCode: end.exitCode,
      verdict: this.adapter.verdict({ exitCode: end.exitCode, stderrTail }, summary),
      summary,
    };
  }

  /** The CLI's cost reached the run's budget mid-run: its process group is stopped (once). */
  private stopOverBudget(summary: StreamSummary): void {
    if (!summary.budgetExceeded || this.overBudget) return;
    this.overBudget = true;
    this.note(
      `budget_exceeded: the run spent ${summary.costCents ?? 0} cents of its ${this.run.budgetCents ?? 0}: stopping\n`,
    );
    this.child?.stop();
  }

  private startTimer(): NodeJS.Timeout {
    return setTimeout(
      () => {
        this.timedOut = true;
        this.options.onOutput("system", `timeout after ${this.run.timeoutSec}s: stopping\n`);
        this.child?.stop();
      },
      Math.max(0, this.deadline - Date.now()),
    );
  }

  /** What the checks before and after the spawn look at; the adapter's CLI when it is its default command. */
  private launchTarget(launch: Launch, cwd: string, env: Record<string, string>): LaunchTarget {
    const program = this.adapter.program;
    return {
      command: launch.command,
      cwd,
      env,
      program: program?.command === launch.command ? program : null,
      runAsUser: this.options.runAs?.user ?? null,
    };
  }

  private outcome(attempt: Attempt, cwd: string, forget: boolean): ProcessOutcome {
    const { summary, verdict } = attempt;
    const error = attempt.error ?? this.failure(verdict);
    const session =
      this.adapter.resumes && summary.sessionId ? { id: summary.sessionId, cwd } : forget ? null : undefined;
    return {
      exitCode: attempt.exitCode,
      timedOut: this.timedOut,
      ...(error ? { error } : {}),
      ...(summary.usage ? { usage: summary.usage } : {}),
      ...(summary.costCents !== undefined ? { costCents: summary.costCents } : {}),
      ...(session !== undefined ? { session } : {}),
    };
  }

  /** A readable reason, unless the run was stopped on purpose or the edge's "exit code N" says it. */
  private failure(verdict: Verdict): string | undefined {
    if (this.timedOut)
      return `timeout: still running after ${this.run.timeoutSec}s, the process group was stopped`;
    // The CLI's own words when it stopped itself at the budget (its verdict), else the runner's.
    if (this.overBudget)
      return !verdict.ok && verdict.reason?.startsWith("budget_exceeded")
        ? verdict.reason
        : `budget_exceeded: the run reached its budget of ${this.run.budgetCents ?? 0} cents, the process group was stopped`;
    if (this.stopped || verdict.ok) return undefined;
    return verdict.reason;
  }

  /** The runner's own note about the run: in the log and in the transcript. */
  private note(text: string): void {
    this.options.onOutput("system", text);
    this.options.onEvent?.({ type: "system", message: text.trim() });
  }
}
