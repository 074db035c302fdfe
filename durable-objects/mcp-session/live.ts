import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { buildMcpServer, type McpRequestExtra } from "../../workers/mcp/server";
import { ResourceSubscriptions } from "../../workers/mcp/subscriptions";
import type { ToolContext } from "../../workers/mcp/tools";
import type { SubscriptionStore } from "./subscription-store";

/** The `retry:` a priming event suggests: how soon a client whose stream was cut asks to resume. */
const RETRY_MS = 1_000;
/** The id an event gets while the initialize is replayed: those events are not kept. */
const UNKEPT_EVENT = "0";

/**
 * A session's SDK server and transport, in the session object's memory. The transport is the SDK's
 * own (session id, SSE, resumability, DELETE); each request brings its caller, whom the tools act as.
 */
export class LiveSession {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  /** Each request's tool context, found from the `authInfo` object the SDK passes to its handlers. */
  readonly #contexts = new WeakMap<AuthInfo, ToolContext>();
  #subscriptions: ResourceSubscriptions | undefined;
  #replaying = false;

  private constructor(sessionId: string, events: EventStore, onClosed: () => Promise<void>) {
    const kept: EventStore = {
      storeEvent: (streamId, message) =>
        this.#replaying ? Promise.resolve(UNKEPT_EVENT) : events.storeEvent(streamId, message),
      getStreamIdForEventId: (eventId) =>
        events.getStreamIdForEventId?.(eventId) ?? Promise.resolve(undefined),
      replayEventsAfter: (eventId, sink) => events.replayEventsAfter(eventId, sink),
    };
    this.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      eventStore: kept,
      retryInterval: RETRY_MS,
      onsessionclosed: onClosed,
    });
  }

  static async start(
    sessionId: string,
    events: EventStore,
    subscribed: SubscriptionStore,
    onClosed: () => Promise<void>,
  ): Promise<LiveSession> {
    const live = new LiveSession(sessionId, events, onClosed);
    const server = buildMcpServer(live.#contextOf);
    live.#subscriptions = new ResourceSubscriptions(server.server, subscribed);
    live.#subscriptions.register(live.#contextOf);
    await server.connect(live.transport);
    return live;
  }

  /** Subscribes again to what the session had subscribed to; one refused now (access ended) is dropped. */
  async resubscribe(uris: string[], context: ToolContext): Promise<void> {
    for (const uri of uris)
      await this.#subscriptions?.subscribe(uri, context).catch(() => this.#subscriptions?.unsubscribe(uri));
  }

  /** Closes the session's streams and the feeds its subscriptions listen to. */
  async close(): Promise<void> {
    this.#subscriptions?.closeAll();
    await this.transport.close();
  }

  /** One HTTP request of the session, its tools acting through `context`. */
  handle(request: Request, context: ToolContext, parsedBody?: unknown): Promise<Response> {
    const authInfo: AuthInfo = { token: "", clientId: "switchboard", scopes: [] };
    this.#contexts.set(authInfo, context);
    return this.transport.handleRequest(request, { authInfo, parsedBody });
  }

  /**
   * Brings a fresh transport and server to where the session was: the SDK keeps the initialized state
   * (session id, client capabilities) only in memory, so the stored initialize is handled again and
   * its answer, already delivered once, is dropped.
   */
  async replayInitialize(initialize: string, url: string, context: ToolContext): Promise<void> {
    this.#replaying = true;
    try {
      const replay = new Request(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      });
      const answer = await this.handle(replay, context, JSON.parse(initialize));
      await answer.text();
      if (!answer.ok) throw new Error(`replaying the session's initialize answered ${answer.status}`);
    } finally {
      this.#replaying = false;
    }
  }

  readonly #contextOf = (extra: McpRequestExtra): ToolContext => {
    const context = extra.authInfo && this.#contexts.get(extra.authInfo);
    if (context === undefined) throw new Error("an MCP request reached a tool without its caller");
    return context;
  };
}
