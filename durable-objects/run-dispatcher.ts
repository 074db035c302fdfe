import { DurableObject } from "cloudflare:workers";
import { type DispatcherFrame, type RunnerFrame, RunnerFrameSchema } from "../bridge/src/protocol/runner";
import {
  claimNextRun,
  failRunnerRuns,
  finishRun,
  logsComplete,
  recordLog,
  touchRuns,
} from "../workers/control/runs";
import type { RunDispatcherObject } from "../workers/control/wakes";
import type { Env } from "../workers/core/env";
import { database } from "../workers/db/client";

type FinishFrame = Extract<RunnerFrame, { type: "finish" }>;
/** How long a finish waits for output frames still on their way before it is applied anyway. */
const FINISH_GRACE_MS = 5_000;

interface RunnerLink {
  /** Fresh per connection: a bridge that reconnects never adopts runs of its previous link. */
  runnerId: string;
  bridgeId: string;
  /** The edge's origin as the runner reached it: what the runs' PLATFORM_API_URL points at. */
  apiUrl: string;
}

/**
 * One per deployment ("runs"): hands queued heartbeat runs of local adapters to the bridges' runners
 * over their WebSockets (Hibernation API, so idle links cost nothing). D1 stays the source of truth:
 * a claim is one conditional UPDATE, so two runners never take the same run. A link that closes fails
 * the runs it held and releases their issues; the cron sweeps runs whose runner went silent.
 */
export class RunDispatcher extends DurableObject<Env> implements RunDispatcherObject {
  /**
   * Frames are handled one after another, in arrival order: each awaits D1, and input gates do not
   * hold across those awaits, so without the queue two log frames could interleave their writes (a
   * lost excerpt line) and a run's finish could overtake its last output.
   */
  #tail: Promise<unknown> = Promise.resolve();
  /** Finishes that arrived before all of their run's output; applied when it lands, or after a grace. */
  readonly #heldFinishes = new Map<
    string,
    { runnerId: string; frame: FinishFrame; timer: ReturnType<typeof setTimeout> }
  >();
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const link: RunnerLink = {
      runnerId: crypto.randomUUID(),
      bridgeId: url.searchParams.get("bridge") ?? "unknown",
      apiUrl: request.headers.get("X-Platform-Api-Url") ?? url.origin,
    };
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    this.ctx.acceptWebSocket(server, [link.runnerId]);
    server.serializeAttachment(link);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Runs may be waiting: every connected runner is told to claim. */
  async nudge(): Promise<void> {
    const frame = JSON.stringify({ type: "nudge" } satisfies DispatcherFrame);
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.send(frame);
      } catch {
        // a closing socket; its close handler deals with its runs
      }
    }
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const link = ws.deserializeAttachment() as RunnerLink | null;
    if (!link || typeof message !== "string") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return ws.close(1003, "frames are JSON");
    }
    const frame = RunnerFrameSchema.safeParse(parsed);
    if (!frame.success) return ws.close(1003, "unknown frame");
    const handled = this.#tail.then(() => this.handle(ws, link, frame.data));
    this.#tail = handled.catch(() => undefined);
    await handled;
  }

  private async handle(ws: WebSocket, link: RunnerLink, frame: RunnerFrame): Promise<void> {
    const db = database(this.env.DB);
    if (frame.type === "claim") {
      for (let slot = 0; slot < frame.slots; slot++) {
        const run = await claimNextRun(this.env, db, link.runnerId, link.apiUrl);
        if (!run) return;
        ws.send(JSON.stringify({ type: "run", run } satisfies DispatcherFrame));
      }
    } else if (frame.type === "log") {
      await recordLog(db, link.runnerId, frame);
      await this.#releaseHeldFinish(frame.runId, false);
    } else if (frame.type === "heartbeat") await touchRuns(db, link.runnerId, frame.runIds);
    else if (await logsComplete(db, frame.runId, frame.logFrames))
      await finishRun(this.env, db, link.runnerId, frame);
    else this.#holdFinish(link.runnerId, frame);
  }

  #holdFinish(runnerId: string, frame: FinishFrame): void {
    const timer = setTimeout(() => {
      const released = this.#tail.then(() => this.#releaseHeldFinish(frame.runId, true));
      this.#tail = released.catch(() => undefined);
    }, FINISH_GRACE_MS);
    this.#heldFinishes.set(frame.runId, { runnerId, frame, timer });
  }

  /** Applies a held finish once its output is complete, or regardless when `force` (the grace ran out). */
  async #releaseHeldFinish(runId: string, force: boolean): Promise<void> {
    const held = this.#heldFinishes.get(runId);
    if (!held) return;
    const db = database(this.env.DB);
    if (!force && !(await logsComplete(db, runId, held.frame.logFrames))) return;
    clearTimeout(held.timer);
    this.#heldFinishes.delete(runId);
    await finishRun(this.env, db, held.runnerId, held.frame);
  }

  override async webSocketClose(ws: WebSocket): Promise<void> {
    const link = ws.deserializeAttachment() as RunnerLink | null;
    if (!link) return;
    // After the frames already received: a finish sent just before the close still counts.
    const failed = this.#tail.then(() => failRunnerRuns(this.env, database(this.env.DB), link.runnerId));
    this.#tail = failed.catch(() => undefined);
    await failed;
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.webSocketClose(ws);
  }
}
