import { DurableObject } from "cloudflare:workers";
import { type DispatcherFrame, type RunnerFrame, RunnerFrameSchema } from "../bridge/src/protocol/runner";
import { apiBaseUrl, runnerConnected, runnerDisconnected, runnerSeen } from "../workers/control/runners";
import {
  claimNextRun,
  closedIssueIds,
  failLinkRuns,
  finishRun,
  LogAnnouncer,
  linkHoldsRun,
  logsComplete,
  OutputRedactor,
  type RunnerLink,
  recordEvent,
  recordLog,
  touchRuns,
} from "../workers/control/runs";
import type { RunDispatcherObject } from "../workers/control/wakes";
import type { Env } from "../workers/core/env";
import { KeyedQueue } from "../workers/core/keyed-queue";
import { database } from "../workers/db/client";
import { jsonTooDeep } from "../workers/http/json-depth";
import { HttpWakes } from "./run-dispatcher/http-wakes";
import { answerHeartbeats } from "./shared/link-liveness";

type FinishFrame = Extract<RunnerFrame, { type: "finish" }>;
/** How long a finish waits for output frames still on their way before it is applied anyway. */
const FINISH_GRACE_MS = 5_000;
/** Close code for a runner whose token was revoked (the runner retries slowly and logs why). */
const REVOKED = 4003;

const runnerTag = (runnerId: string) => `runner:${runnerId}`;

/**
 * One per deployment ("runs"): hands queued heartbeat runs to registered runners over their
 * WebSockets (Hibernation API, so idle links cost nothing). Each link belongs to one runner, whose
 * token the Worker checked; a claim only ever takes runs of the companies that runner serves. D1 stays
 * the source of truth: a claim is one conditional UPDATE, so two runners never take the same run. A
 * link that closes fails the runs it held and releases their issues; the cron sweeps runs whose runner
 * went silent.
 */
export class RunDispatcher extends DurableObject<Env> implements RunDispatcherObject {
  /** Tells issue pages their runs' output grew, a few times a second at most. */
  readonly #logAnnouncer: LogAnnouncer;
  /** Scrubs runs' output of their company's secrets before it is stored (and holds split values). */
  readonly #redactor: OutputRedactor;
  /** Runs of http agents: sent from here, no runner (retries and deadlines on the alarm). */
  readonly #httpWakes: HttpWakes;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#logAnnouncer = new LogAnnouncer(env, (work) => ctx.waitUntil(work));
    this.#redactor = new OutputRedactor(env, ctx.storage);
    this.#httpWakes = new HttpWakes(env, ctx.storage);
    // Runners share the bridges' socket code, which pings and drops links that never answer.
    answerHeartbeats(ctx);
  }

  /**
   * Each runner's frames are handled one after another, in arrival order: each awaits D1, and input
   * gates do not hold across those awaits, so without the queue two log frames could interleave their
   * writes (a lost excerpt line), a run's finish could overtake its last output, and a link's close
   * could mark the runner disconnected after its new link said hello. Runners do not wait on one
   * another: one runner's slow or stuck frame holds up its own frames only, not every company's
   * runners (keyed by runner id).
   */
  readonly #frames = new KeyedQueue();
  /** Finishes that arrived before all of their run's output; applied when it lands, or after a grace. */
  readonly #heldFinishes = new Map<
    string,
    { linkId: string; frame: FinishFrame; timer: ReturnType<typeof setTimeout> }
  >();

  /** A runner's link; the Worker authenticated its token and names the runner in X-Runner-Id. */
  override async fetch(request: Request): Promise<Response> {
    const runnerId = request.headers.get("X-Runner-Id");
    if (!runnerId) return new Response("no runner", { status: 400 });
    const link: RunnerLink = {
      linkId: crypto.randomUUID(),
      runnerId,
      apiUrl: apiBaseUrl(request.headers.get("X-Platform-Api-Url") ?? new URL(request.url).origin),
    };
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    this.ctx.acceptWebSocket(server, [link.linkId, runnerTag(runnerId)]);
    server.serializeAttachment(link);
    return new Response(null, { status: 101, webSocket: client });
  }

  async nudge(apiUrl?: string): Promise<void> {
    this.#broadcast({ type: "nudge" });
    await this.#httpWakes.dispatch(apiUrl ? apiBaseUrl(apiUrl) : undefined);
  }

  /** Retries and deadlines of http runs (and http runs queued by a path that did not nudge). */
  override async alarm(): Promise<void> {
    await this.#httpWakes.dispatch(undefined);
  }

  async issuesClosed(): Promise<void> {
    this.#broadcast({ type: "check-workspaces" });
  }

  async cancelRun(runId: string, linkId: string): Promise<boolean> {
    const frame = JSON.stringify({ type: "cancel", runId } satisfies DispatcherFrame);
    const links = this.ctx.getWebSockets(linkId);
    for (const ws of links) ws.send(frame);
    return links.length > 0;
  }

  async disconnectRunner(runnerId: string): Promise<void> {
    const links = this.ctx.getWebSockets(runnerTag(runnerId));
    for (const ws of links) {
      const link = ws.deserializeAttachment() as RunnerLink | null;
      try {
        ws.close(REVOKED, "runner revoked");
      } catch {
        // already closing
      }
      if (link)
        await this.#frames.run(runnerId, async () => {
          await failLinkRuns(this.env, database(this.env.DB), link.linkId, "runner_revoked");
          await this.#redactor.dropLink(link.linkId);
        });
    }
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const link = ws.deserializeAttachment() as RunnerLink | null;
    if (!link || typeof message !== "string") return;
    // Runners belong to users: a frame nested deep enough to overflow later readers is refused.
    if (jsonTooDeep(message)) return ws.close(1003, "frame nested too deep");
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return ws.close(1003, "frames are JSON");
    }
    const frame = RunnerFrameSchema.safeParse(parsed);
    if (!frame.success) return ws.close(1003, "unknown frame");
    await this.#frames.run(link.runnerId, () => this.handle(ws, link, frame.data));
  }

  private async handle(ws: WebSocket, link: RunnerLink, frame: RunnerFrame): Promise<void> {
    const db = database(this.env.DB);
    if (frame.type === "hello") {
      const { type: _, version, ...capabilities } = frame;
      await runnerConnected(db, link.runnerId, { version, capabilities });
    } else if (frame.type === "claim") {
      for (let slot = 0; slot < frame.slots; slot++) {
        const run = await claimNextRun(this.env, db, link);
        if (!run) return;
        ws.send(JSON.stringify({ type: "run", run } satisfies DispatcherFrame));
      }
    } else if (frame.type === "log") {
      const grown = await recordLog(db, link.linkId, frame, this.#redactor);
      if (grown) this.#logAnnouncer.wrote(grown);
      await this.#releaseHeldFinish(frame.runId, false);
    } else if (frame.type === "event") {
      const grown = await recordEvent(db, link.linkId, frame, this.#redactor);
      if (grown) this.#logAnnouncer.wrote(grown);
      await this.#releaseHeldFinish(frame.runId, false);
    } else if (frame.type === "workspaces") {
      const issueIds = await closedIssueIds(db, link.runnerId, frame.issueIds);
      if (issueIds.length > 0)
        ws.send(JSON.stringify({ type: "closed-issues", issueIds } satisfies DispatcherFrame));
    } else if (frame.type === "heartbeat") {
      await touchRuns(db, link.linkId, frame.runIds);
      await runnerSeen(db, link.runnerId);
    } else if (!(await linkHoldsRun(db, link.linkId, frame.runId))) {
      // Not this link's run (or it already ended): never held, so it cannot displace the finish of
      // the runner that does hold it (which would leave that run to end as runner_lost).
      return;
    } else if (await logsComplete(db, frame.runId, frame.logFrames, frame.eventFrames))
      await finishRun(this.env, db, link.linkId, frame, this.#redactor);
    else this.#holdFinish(link, frame);
  }

  #holdFinish({ linkId, runnerId }: RunnerLink, frame: FinishFrame): void {
    // The link holding the run sent its finish again: the newer one replaces it, with one timer.
    clearTimeout(this.#heldFinishes.get(frame.runId)?.timer);
    const timer = setTimeout(
      () => void this.#frames.run(runnerId, () => this.#releaseHeldFinish(frame.runId, true)),
      FINISH_GRACE_MS,
    );
    this.#heldFinishes.set(frame.runId, { linkId, frame, timer });
  }

  /** Applies a held finish once its output is complete, or regardless when `force` (the grace ran out). */
  async #releaseHeldFinish(runId: string, force: boolean): Promise<void> {
    const held = this.#heldFinishes.get(runId);
    if (!held) return;
    const db = database(this.env.DB);
    if (!force && !(await logsComplete(db, runId, held.frame.logFrames, held.frame.eventFrames))) return;
    clearTimeout(held.timer);
    this.#heldFinishes.delete(runId);
    await finishRun(this.env, db, held.linkId, held.frame, this.#redactor);
  }

  override async webSocketClose(ws: WebSocket): Promise<void> {
    const link = ws.deserializeAttachment() as RunnerLink | null;
    if (!link) return;
    const others = this.ctx.getWebSockets(runnerTag(link.runnerId)).filter((other) => other !== ws);
    await this.#frames.run(link.runnerId, async () => {
      const db = database(this.env.DB);
      await failLinkRuns(this.env, db, link.linkId);
      await this.#redactor.dropLink(link.linkId);
      if (others.length === 0) await runnerDisconnected(db, link.runnerId);
    });
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.webSocketClose(ws);
  }

  #broadcast(frame: DispatcherFrame): void {
    const text = JSON.stringify(frame);
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.send(text);
      } catch {
        // a socket that is closing; its close handler cleans up
      }
    }
  }
}
