/**
 * The bridge's agent runner: one link to the edge's RunDispatcher, up to `slots` heartbeat runs at a
 * time. It claims when it connects, when the edge nudges, after each run, and on a slow poll (a lost
 * nudge only delays a run). Each run's output streams back in order; the edge fails and releases the
 * runs of a link that drops, so a killed bridge leaves no issue locked.
 */

import {
  type DispatcherFrame,
  DispatcherFrameSchema,
  type RunAssignment,
  type RunnerFrame,
} from "../protocol/runner.ts";
import type { Log } from "../shared/log.ts";
import { type AfterClose, type LinkClose, ReconnectingSocket } from "../shared/reconnecting-socket.ts";
import { AgentProcess } from "./agent-process.ts";

const POLL_MS = 5_000;
const HEARTBEAT_MS = 20_000;

export interface AgentRunnerOptions {
  edgeUrl: string;
  token: string;
  bridgeId: string;
  slots: number;
  log: Log;
}

export class AgentRunner {
  private readonly link: ReconnectingSocket;
  private readonly running = new Map<string, AgentProcess>();
  private readonly seq = new Map<string, number>();
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly options: AgentRunnerOptions) {
    this.link = new ReconnectingSocket({
      url: `${options.edgeUrl}/bridge/v1/runner?bridge=${encodeURIComponent(options.bridgeId)}`,
      token: options.token,
      maxQueued: 1_000,
      onOpen: () => this.onOpen(),
      onMessage: (text) => this.onFrame(text),
      onClose: (close) => this.onClose(close),
      onError: (error) => options.log("debug", "runner link error", { error: error.message }),
    });
  }

  start(): void {
    this.link.start();
    this.timers = [
      setInterval(() => this.claim(), POLL_MS),
      setInterval(() => this.heartbeat(), HEARTBEAT_MS),
    ];
    for (const timer of this.timers) timer.unref();
  }

  /** Stops claiming, stops the processes, closes the link (the edge fails what was still running). */
  async shutdown(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    for (const process of this.running.values()) process.stop();
    await this.link.close(1001, "runner shutting down");
  }

  private onOpen(): void {
    this.link.resetBackoff();
    this.options.log("info", "runner link open", { running: this.running.size });
    this.claim();
  }

  private onClose(close: LinkClose): AfterClose {
    this.options.log("warn", "runner link closed", { code: close.code, httpStatus: close.httpStatus });
    return close.httpStatus === 401 ? "retry-slowly" : "retry";
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
    else this.running.get(frame.runId)?.stop();
  }

  private send(frame: RunnerFrame): void {
    this.link.send(JSON.stringify(frame));
  }

  private claim(): void {
    const free = this.options.slots - this.running.size;
    if (free > 0 && this.link.isOpen) this.send({ type: "claim", slots: free });
  }

  private heartbeat(): void {
    if (this.running.size > 0) this.send({ type: "heartbeat", runIds: [...this.running.keys()] });
  }

  private output(runId: string, stream: "stdout" | "stderr" | "system", text: string): void {
    const seq = this.seq.get(runId) ?? 0;
    this.seq.set(runId, seq + 1);
    this.send({ type: "log", runId, seq, stream, text });
  }

  private execute(run: RunAssignment): void {
    const process = new AgentProcess(run, {
      onOutput: (stream, text) => this.output(run.runId, stream, text),
    });
    this.running.set(run.runId, process);
    this.options.log("info", "run started", { run: run.runId, agent: run.agentId, command: run.command });
    process.start().then((outcome) => {
      const logFrames = this.seq.get(run.runId) ?? 0;
      this.running.delete(run.runId);
      this.seq.delete(run.runId);
      this.options.log("info", "run finished", {
        run: run.runId,
        exitCode: outcome.exitCode,
        timedOut: outcome.timedOut,
      });
      this.send({ type: "finish", runId: run.runId, logFrames, ...outcome });
      this.claim();
    });
  }
}
