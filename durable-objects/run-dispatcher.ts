import { DurableObject } from "cloudflare:workers";
import { type DispatcherFrame, type RunnerFrame, RunnerFrameSchema } from "../bridge/src/runner-protocol";
import {
  claimNextRun,
  failRunnerRuns,
  finishRun,
  recordLog,
  touchRuns,
} from "../workers/control/run-lifecycle";
import { database } from "../workers/db/client";
import type { Env } from "../workers/env";

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
export class RunDispatcher extends DurableObject<Env> {
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
    await this.handle(ws, link, frame.data);
  }

  private async handle(ws: WebSocket, link: RunnerLink, frame: RunnerFrame): Promise<void> {
    const db = database(this.env.DB);
    if (frame.type === "claim") {
      for (let slot = 0; slot < frame.slots; slot++) {
        const run = await claimNextRun(this.env, db, link.runnerId, link.apiUrl);
        if (!run) return;
        ws.send(JSON.stringify({ type: "run", run } satisfies DispatcherFrame));
      }
    } else if (frame.type === "log") await recordLog(db, link.runnerId, frame);
    else if (frame.type === "heartbeat") await touchRuns(db, link.runnerId, frame.runIds);
    else await finishRun(this.env, db, link.runnerId, frame);
  }

  override async webSocketClose(ws: WebSocket): Promise<void> {
    const link = ws.deserializeAttachment() as RunnerLink | null;
    if (link) await failRunnerRuns(this.env, database(this.env.DB), link.runnerId);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.webSocketClose(ws);
  }
}
