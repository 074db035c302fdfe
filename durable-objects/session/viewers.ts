import { closeSockets } from "../../workers/auth/live-sockets";
import type { SessionState } from "../../workers/db/schema";
import {
  broadcastToViewers,
  closeAllViewers,
  isViewer,
  VIEWER_TAG,
  type ViewerAttachment,
} from "./bridge-links";
import { statusOf } from "./lifecycle";
import type { SessionRecord } from "./storage";

/** What a dashboard viewer is told on connect and after every lifecycle change. */
export interface SessionView {
  type: "session";
  state: SessionState;
  status: ReturnType<typeof statusOf>;
  qrImage: string | null;
  me: SessionRecord["me"];
}

/**
 * The dashboard's viewer sockets of one SessionDO (hibernatable, tagged apart from bridge links).
 * `read` gives the current record; viewers only listen.
 */
export class SessionViewers {
  private lastViewSent = "";
  /** In-process waiters (a `GET …/qr` waiting for the first QR): woken at every lifecycle change. */
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly read: () => SessionRecord,
  ) {}

  /**
   * A socket that receives the session's view now and after every change, tagged with its owner's
   * tag (workers/auth/live-sockets.ts) so that ending their access closes it.
   */
  accept(owner: string | null): Response {
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, owner === null ? [VIEWER_TAG] : [VIEWER_TAG, owner]);
    server.serializeAttachment({ viewer: true } satisfies ViewerAttachment);
    server.send(JSON.stringify(this.view()));
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Tells viewers the view if it changed since the last time (writes that touch no visible field are quiet). */
  tell(): void {
    for (const wake of [...this.waiters]) wake();
    const text = JSON.stringify(this.view());
    if (text === this.lastViewSent) return;
    this.lastViewSent = text;
    broadcastToViewers(this.ctx, text);
  }

  /** Resolves at the next lifecycle change, or after `ms` if none comes. */
  nextChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.waiters.add(wake);
    });
  }

  closeAll(reason: string): void {
    closeAllViewers(this.ctx, 1000, reason);
  }

  private view(): SessionView {
    const { state, qrImage, me } = this.read();
    return { type: "session", state, status: statusOf(state), qrImage, me };
  }
}

/** Closes one owner's viewer sockets (never a bridge link, whatever its tags): their access ended. */
export function cutViewers(ctx: DurableObjectState, ownerTag: string, code: number, reason: string): number {
  return closeSockets(ctx.getWebSockets(ownerTag).filter(isViewer), code, reason);
}
