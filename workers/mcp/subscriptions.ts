import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { McpRequestExtra } from "./server";
import { asCaller, issuePath, type ToolContext } from "./tools";

/** issue://ACM-12 or issue://ACM-12/documents/plan: which issue, and which document if one. */
interface Watched {
  issueId: string;
  documentKey: string | null;
}

function watchedOf(uri: string): Watched | null {
  const match = uri.match(/^issue:\/\/([^/]+)(?:\/documents\/([^/]+))?$/);
  if (!match?.[1]) return null;
  return {
    issueId: decodeURIComponent(match[1]),
    documentKey: match[2] === undefined ? null : decodeURIComponent(match[2]),
  };
}

interface FeedEvent {
  type: string;
  kind?: string;
  key?: string;
}

/** Whether a frame of the issue's feed changes what the resource reads. */
function changes(watched: Watched, frame: FeedEvent): boolean {
  if (frame.type !== "event") return false;
  if (frame.kind === "issue.deleted") return true;
  if (watched.documentKey === null) return !frame.kind?.startsWith("run.");
  return frame.kind === "document.changed" && frame.key === watched.documentKey;
}

/**
 * `resources/subscribe` for issue resources: the session listens to the issue's live feed (the
 * socket the dashboard's issue page opens, GET /api/issues/{id}/events, opened in-process as the
 * caller, so the REST route authorizes it and a revocation closes it) and sends
 * `notifications/resources/updated` on the session's GET stream when the issue, its comments or the
 * watched document change. The subscribed URIs are stored (`remember`), so a session rebuilt after an
 * eviction subscribes again.
 */
export class ResourceSubscriptions {
  readonly #sockets = new Map<string, WebSocket>();

  constructor(
    private readonly server: Server,
    private readonly store: { add(uri: string): void; remove(uri: string): void },
  ) {}

  /** Declares the capability and answers subscribe/unsubscribe; before the server connects. */
  register(contextOf: (extra: McpRequestExtra) => ToolContext): void {
    this.server.registerCapabilities({ resources: { subscribe: true } });
    this.server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
      await this.subscribe(request.params.uri, contextOf(extra));
      return {};
    });
    this.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
      this.unsubscribe(request.params.uri);
      return {};
    });
  }

  async subscribe(uri: string, context: ToolContext): Promise<void> {
    const watched = watchedOf(uri);
    if (watched === null)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Subscriptions are offered for issue:// resources, not ${uri}`,
      );
    if (this.#sockets.has(uri)) return;
    const socket = await openFeed(context, watched.issueId, uri);
    socket.accept();
    this.#sockets.set(uri, socket);
    this.store.add(uri);
    socket.addEventListener("message", (event) => {
      const frame = parsedFrame(event.data);
      if (frame !== null && changes(watched, frame))
        this.server.sendResourceUpdated({ uri }).catch(() => undefined);
    });
    socket.addEventListener("close", () => this.#forget(uri, socket));
  }

  unsubscribe(uri: string): void {
    const socket = this.#sockets.get(uri);
    this.#forget(uri, socket);
    this.store.remove(uri);
    socket?.close(1000, "unsubscribed");
  }

  /** The session's streams closed (access changed, the session ended): its feeds close too; the URIs stay stored. */
  closeAll(): void {
    for (const socket of this.#sockets.values()) socket.close(1000, "session closed");
    this.#sockets.clear();
  }

  #forget(uri: string, socket: WebSocket | undefined): void {
    if (socket !== undefined && this.#sockets.get(uri) === socket) this.#sockets.delete(uri);
  }
}

/** The issue's live feed as the caller, or the REST refusal as an MCP error (another company's issue: not found). */
async function openFeed(context: ToolContext, issueId: string, uri: string): Promise<WebSocket> {
  const response = await context.appFetch(
    asCaller(
      new Request(`${context.origin}/api${issuePath(issueId)}/events`, {
        headers: { ...context.caller.headers, Upgrade: "websocket" },
      }),
      context.caller,
    ),
  );
  if (response.status === 101 && response.webSocket) return response.webSocket;
  await response.body?.cancel();
  const why = response.status === 404 ? "not found" : `HTTP ${response.status}`;
  throw new McpError(ErrorCode.InvalidParams, `Resource ${uri} ${why}`);
}

function parsedFrame(data: unknown): FeedEvent | null {
  if (typeof data !== "string") return null;
  try {
    return JSON.parse(data) as FeedEvent;
  } catch {
    return null;
  }
}
