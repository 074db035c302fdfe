import { DurableObject } from "cloudflare:workers";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import type { Env } from "../workers/core/env";
import { registeredAppFetch } from "../workers/mcp/app-fetch";
import {
  type McpSessionObject,
  type SessionCredential,
  sessionNotFound,
} from "../workers/mcp/session-object";
import type { McpCaller, ToolContext } from "../workers/mcp/tools";
import { SqlEventStore } from "./mcp-session/event-store";
import { LiveSession } from "./mcp-session/live";
import { type SessionRecord, SessionRecords } from "./mcp-session/record";
import { SubscriptionStore } from "./mcp-session/subscription-store";

/** A session nobody used for this long ends (its alarm); docs/decisions.md, "MCP sessions". */
export const SESSION_IDLE_MS = 24 * 60 * 60 * 1000;
/** `last_used_at` is written at most this often: the alarm needs no finer clock. */
const TOUCH_EVERY_MS = 60_000;
const OPENING_COMMENT = new TextEncoder().encode(": stream open\n\n");

/**
 * One MCP session (named by its `Mcp-Session-Id`): the SDK's server and transport in memory, and in
 * SQLite what outlives an eviction: the session record (whose key, the initialize to replay) and the
 * SSE events a cut stream resumes from. Tools run the app's REST handlers in-process as the request's
 * caller, whom the Worker authenticated (workers/mcp/routes.ts).
 */
export class McpSession extends DurableObject<Env> implements McpSessionObject {
  readonly #records = new SessionRecords(this.ctx.storage.sql);
  readonly #events = new SqlEventStore(this.ctx.storage.sql);
  readonly #subscribed = new SubscriptionStore(this.ctx.storage.sql);
  #live: Promise<LiveSession> | undefined;

  async open(
    sessionId: string,
    request: Request,
    initialize: string,
    caller: McpCaller,
    credential: SessionCredential,
  ): Promise<Response> {
    if (this.#records.read() !== null || this.#live !== undefined) return sessionNotFound();
    const live = await LiveSession.start(sessionId, this.#events, this.#subscribed, () => this.#end());
    const response = await live.handle(request, this.#toolContext(request, caller), JSON.parse(initialize));
    if (!response.ok) return response;
    const now = Date.now();
    this.#records.create({
      sessionId,
      ...credential,
      ...agreedOn(initialize),
      initialize,
      createdAt: now,
      lastUsedAt: now,
    });
    this.#live = Promise.resolve(live);
    await this.ctx.storage.setAlarm(now + SESSION_IDLE_MS);
    return response;
  }

  async serve(request: Request, caller: McpCaller, credential: SessionCredential): Promise<Response> {
    const record = this.#records.read();
    if (record === null || record.fingerprint !== credential.fingerprint) return sessionNotFound();
    const context = this.#toolContext(request, caller);
    const live = await this.#liveSession(record, request.url, context);
    this.#noteUse(record);
    const response = await live.handle(request, context);
    return request.method === "GET" && response.ok ? withOpeningComment(response) : response;
  }

  async admit(fingerprint: string): Promise<boolean> {
    const record = this.#records.read();
    if (record === null || record.fingerprint !== fingerprint) return false;
    this.#noteUse(record);
    return true;
  }

  /**
   * The owner's credentials changed (auth/live-sockets.ts: a revoked key, a removed member, but also
   * a sign-out of one of their dashboard sessions): the open streams close at once. The session itself
   * is kept: it grants nothing alone, since every request is authenticated again at /mcp (a revoked
   * key gets 401) and every tool is authorized again by the REST route it calls. Ending it here made
   * a still-valid key's client lose its session to an unrelated sign-out (SDK clients do not
   * re-initialize on 404). The next request rebuilds the server from the stored initialize.
   */
  async cutSockets(ownerTag: string): Promise<number> {
    if (this.#records.read()?.ownerTag !== ownerTag) return 0;
    const live = this.#live;
    this.#live = undefined;
    await (await live?.catch(() => undefined))?.close();
    return 1;
  }

  /** Ends the session once it has been idle for SESSION_IDLE_MS; otherwise looks again then. */
  override async alarm(): Promise<void> {
    const record = this.#records.read();
    if (record === null) return;
    const due = record.lastUsedAt + SESSION_IDLE_MS;
    if (Date.now() >= due) await this.#end();
    else await this.ctx.storage.setAlarm(due);
  }

  /** The session in memory, or rebuilt from storage after an eviction (one rebuild for concurrent requests). */
  #liveSession(record: SessionRecord, url: string, context: ToolContext): Promise<LiveSession> {
    this.#live ??= (async () => {
      const live = await LiveSession.start(record.sessionId, this.#events, this.#subscribed, () =>
        this.#end(),
      );
      await live.replayInitialize(record.initialize, url, context);
      await live.resubscribe(this.#subscribed.list(), context);
      return live;
    })().catch((error: unknown) => {
      this.#live = undefined;
      throw error;
    });
    return this.#live;
  }

  #noteUse(record: SessionRecord): void {
    const now = Date.now();
    if (now - record.lastUsedAt >= TOUCH_EVERY_MS) this.#records.touch(now);
  }

  /** Forgets the session (record, events, alarm) and closes its open streams; later requests get 404. */
  async #end(): Promise<void> {
    const live = this.#live;
    this.#live = undefined;
    this.#records.erase();
    this.#events.clear();
    this.#subscribed.clear();
    await this.ctx.storage.deleteAlarm();
    await (await live?.catch(() => undefined))?.close();
  }

  #toolContext(request: Request, caller: McpCaller): ToolContext {
    const appFetch = registeredAppFetch();
    const executionContext = {
      waitUntil: (promise: Promise<unknown>) => this.ctx.waitUntil(promise),
      passThroughOnException: () => {},
      props: {},
    };
    return {
      appFetch: (rest) => appFetch(rest, this.env, executionContext),
      env: this.env,
      origin: new URL(request.url).origin,
      caller,
      defer: (promise) => this.ctx.waitUntil(promise),
    };
  }
}

/** The protocol version and client the initialize agreed on (the SDK answers its own latest to an unknown one). */
function agreedOn(initialize: string): { protocolVersion: string; clientInfo: string } {
  const params = (JSON.parse(initialize) as { params?: { protocolVersion?: string; clientInfo?: unknown } })
    .params;
  const asked = params?.protocolVersion ?? "";
  return {
    protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION,
    clientInfo: JSON.stringify(params?.clientInfo ?? null),
  };
}

/**
 * A GET stream's headers reach an HTTP client only with its first bytes, and the SDK writes none until
 * there is something to say (or its 15 s keep-alive): a comment first lets the client see it open.
 */
function withOpeningComment(response: Response): Response {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>({
    start: (controller) => controller.enqueue(OPENING_COMMENT),
  });
  response.body?.pipeTo(writable).catch(() => undefined);
  return new Response(readable, response);
}
