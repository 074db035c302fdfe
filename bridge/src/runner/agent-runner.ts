/**
 * The runner's link to the edge's RunDispatcher: up to `slots` heartbeat runs at a time. It claims
 * when it connects, when the edge nudges, after each run, and on a slow poll (a lost nudge only
 * delays a run). Each run's output streams back in order. When the link drops, the edge fails the runs
 * it held and releases their issues, so the runner stops their processes too: nothing it runs
 * outlives the edge's record of it.
 */
import { arch, platform } from "node:os";
import path from "node:path";
import {
  type DispatcherFrame,
  DispatcherFrameSchema,
  type RunAssignment,
  type RunnerFrame,
} from "../protocol/runner.ts";
import type { TranscriptEvent } from "../protocol/transcript.ts";
import type { Log } from "../shared/log.ts";
import { type AfterClose, type LinkClose, ReconnectingSocket } from "../shared/reconnecting-socket.ts";
import { adapterFor } from "./adapters/index.ts";
import { AgentProcess } from "./agent-process.ts";
import { type FoundCli, probeClis, withModels } from "./cli-probe.ts";
import type { RunAs } from "./config.ts";
import { Workspaces } from "./workspace.ts";

const POLL_MS = 5_000;
/** The edge counts a runner silent for 90 s as gone; this keeps it well inside that. */
const HEARTBEAT_MS = 20_000;
/** How often the runner asks which of its worktrees' issues were closed (the edge also says so at once). */
const WORKSPACE_CHECK_MS = 60_000;
/** What the runner says it is (package.json's version). */
const VERSION = "0.1.0";

export interface AgentRunnerOptions {
  edgeUrl: string;
  token: string;
  slots: number;
  workDir: string;
  runAs: RunAs | null;
  log: Log;
  /** A run's process group appeared or went away (the launcher stops leftovers if this process dies). */
  onProcessGroup?(pgid: number, live: boolean): void;
}

export class AgentRunner {
  private readonly link: ReconnectingSocket;
  private readonly running = new Map<string, AgentProcess>();
  private readonly seq = new Map<string, number>();
  private readonly eventSeq = new Map<string, number>();
  private timers: NodeJS.Timeout[] = [];
  /** Asked once at start; every hello reports it. */
  private clis: Promise<FoundCli[]> = Promise.resolve([]);
  private readonly workspaces: Workspaces;
  /** The same with the models the CLIs list; null until known or when listing failed. */
  private clisWithModels: Promise<FoundCli[] | null> = Promise.resolve(null);

  constructor(private readonly options: AgentRunnerOptions) {
    this.workspaces = new Workspaces(path.join(options.workDir, "worktrees"), options.runAs);
    this.link = new ReconnectingSocket({
      url: `${options.edgeUrl}/runner/v1/link`,
      token: options.token,
      maxQueued: 1_000,
      onOpen: () => this.onOpen(),
      onMessage: (text) => this.onFrame(text),
      onClose: (close) => this.onClose(close),
      onError: (error) => options.log("debug", "runner link error", { error: error.message }),
    });
  }

  start(): void {
    this.clis = probeClis().catch(() => []);
    this.clisWithModels = this.clis.then((found) => withModels(found)).catch(() => null);
    this.link.start();
    this.timers = [
      setInterval(() => this.claim(), POLL_MS),
      setInterval(() => this.heartbeat(), HEARTBEAT_MS),
      setInterval(() => this.checkWorkspaces(), WORKSPACE_CHECK_MS),
    ];
    for (const timer of this.timers) timer.unref();
  }

  /** Stops claiming, stops the processes, closes the link (the edge fails what was still running). */
  async shutdown(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.stopAll("runner shutting down");
    await this.link.close(1001, "runner shutting down");
  }

  private onOpen(): void {
    this.link.resetBackoff();
    this.options.log("info", "runner link open", { running: this.running.size });
    void this.clis.then((clis) => {
      this.hello(clis);
      this.claim();
      this.checkWorkspaces();
      // The models come later (listing them starts each CLI): a second hello adds them.
      void this.clisWithModels.then((full) => {
        if (full?.some((cli) => cli.models) && this.link.isOpen) this.hello(full);
      });
    });
  }

  private hello(clis: FoundCli[]): void {
    this.send({
      type: "hello",
      version: VERSION,
      slots: this.options.slots,
      platform: platform(),
      arch: arch(),
      node: process.version,
      runAs: this.options.runAs?.user ?? null,
      clis,
    });
  }

  private onClose(close: LinkClose): AfterClose {
    // The edge has failed every run this link held: their processes must not go on working.
    this.stopAll("the runner's link to the edge closed");
    if (close.httpStatus === 401) {
      this.options.log("error", "the edge refused the runner token (unknown or revoked)", {});
      return "retry-slowly";
    }
    this.options.log("warn", "runner link closed", { code: close.code, reason: close.reason });
    return close.code === 4003 ? "retry-slowly" : "retry";
  }

  private stopAll(why: string): void {
    for (const [runId, process] of this.running) {
      this.output(runId, "system", `${why}: stopping\n`);
      process.stop();
    }
  }

  private onFrame(text: string): void {
    let frame: DispatcherFrame;
    try {
      frame = DispatcherFrameSchema.parse(JSON.parse(text));
    } catch {
      this.options.log("warn", "runner ignored a malformed frame");
      return;
    }
    if (frame.type === "nudge") this.claim();
    else if (frame.type === "run") this.execute(frame.run);
    else if (frame.type === "check-workspaces") this.checkWorkspaces();
    else if (frame.type === "closed-issues") void this.removeWorkspaces(frame.issueIds);
    else this.cancel(frame.runId);
  }

  /** Asks the edge which of the issues this runner holds worktrees for are closed. */
  private checkWorkspaces(): void {
    if (!this.link.isOpen) return;
    void this.workspaces.heldIssueIds().then((issueIds) => {
      if (issueIds.length > 0) this.send({ type: "workspaces", issueIds: issueIds.slice(0, 1_000) });
    });
  }

  private async removeWorkspaces(issueIds: string[]): Promise<void> {
    try {
      const removed = await this.workspaces.remove(issueIds);
      if (removed.length > 0)
        this.options.log("info", "worktrees removed", { worktrees: removed.join(", ") });
    } catch (error) {
      this.options.log("warn", "worktree removal failed", { error: String(error) });
    }
  }

  private cancel(runId: string): void {
    const process = this.running.get(runId);
    if (!process) return;
    this.output(runId, "system", "cancelled: stopping\n");
    process.stop();
  }

  private send(frame: RunnerFrame): void {
    this.link.send(JSON.stringify(frame));
  }

  private claim(): void {
    const free = this.options.slots - this.running.size;
    if (free > 0 && this.link.isOpen) this.send({ type: "claim", slots: free });
  }

  private heartbeat(): void {
    if (this.link.isOpen) this.send({ type: "heartbeat", runIds: [...this.running.keys()] });
  }

  private output(runId: string, stream: "stdout" | "stderr" | "system", text: string): void {
    const seq = this.seq.get(runId) ?? 0;
    this.seq.set(runId, seq + 1);
    this.send({ type: "log", runId, seq, stream, text });
  }

  private event(runId: string, event: TranscriptEvent): void {
    const seq = this.eventSeq.get(runId) ?? 0;
    this.eventSeq.set(runId, seq + 1);
    this.send({ type: "event", runId, seq, event });
  }

  private execute(run: RunAssignment): void {
    const process = new AgentProcess(run, {
      workDir: this.options.workDir,
      runAs: this.options.runAs,
      workspaces: this.workspaces,
      onOutput: (stream, text) => this.output(run.runId, stream, text),
      onEvent: (event) => this.event(run.runId, event),
      onProcessGroup: this.options.onProcessGroup,
      // Not beside the runner's own start of the same CLI: OpenCode's first start in a HOME makes its
      // database, and a run started meanwhile fails with "database is locked".
      ...(adapterFor(run.adapterType).program?.models ? { ready: this.clisWithModels } : {}),
    });
    this.running.set(run.runId, process);
    this.options.log("info", "run started", { run: run.runId, agent: run.agentId, adapter: run.adapterType });
    process.start().then((outcome) => {
      const logFrames = this.seq.get(run.runId) ?? 0;
      const eventFrames = this.eventSeq.get(run.runId) ?? 0;
      this.running.delete(run.runId);
      this.seq.delete(run.runId);
      this.eventSeq.delete(run.runId);
      this.options.log("info", "run finished", {
        run: run.runId,
        exitCode: outcome.exitCode,
        timedOut: outcome.timedOut,
      });
      this.send({ type: "finish", runId: run.runId, logFrames, eventFrames, ...outcome });
      this.claim();
      // An agent often closes its own issue just before it exits, while its worktree was still in use.
      if (run.issue) this.checkWorkspaces();
    });
  }
}
