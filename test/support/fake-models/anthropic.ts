// A local stand-in for the Anthropic Messages API, the far end of the network for the real `claude`
// CLI (ANTHROPIC_BASE_URL=http://127.0.0.1:<port>, a dummy ANTHROPIC_API_KEY). It answers
// POST /v1/messages with the SSE stream the API sends (message_start, content blocks with text and
// tool_use deltas, message_delta, message_stop), or an API error, or nothing at all (a hung model),
// as the test's script says, and records every request so a test can see what the CLI sent.
import type { ServerResponse } from "node:http";
import { type RecordedRequest as ModelRequestRecord, sendJson, startModelServer } from "./server.ts";

export type Json = Record<string, unknown>;

export interface MessagesRequest {
  model: string;
  system?: unknown;
  messages: Array<{ role: string; content: unknown }>;
  stream?: boolean;
  [field: string]: unknown;
}

export type RecordedRequest = ModelRequestRecord<MessagesRequest>;

export type Reply =
  | { text: string }
  | { toolUse: { name: string; input: Json } }
  | { error: { status: number; type: string; message: string } }
  /** Never answers: the model hangs. */
  | { hang: true };

/** Decides the reply to each messages request (`index` counts them from 0). */
export type Script = (request: MessagesRequest, index: number) => Reply;

export interface FakeAnthropic {
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface FakeOptions {
  /** Token counts every answer reports (large ones make the CLI's cost visible in whole cents). */
  usage?: { input_tokens: number; output_tokens: number };
}

/** Every text the request carries: system prompt, messages, tool results (to see what reached it). */
export function requestText(request: MessagesRequest): string {
  return JSON.stringify([request.system ?? null, request.messages]);
}

/** The tool results the latest user message carries. */
export function toolResults(request: MessagesRequest): Array<{ content: string; isError: boolean }> {
  const last = request.messages.at(-1);
  if (!last || !Array.isArray(last.content)) return [];
  return (last.content as Json[])
    .filter((block) => block.type === "tool_result")
    .map((block) => ({ content: JSON.stringify(block.content ?? ""), isError: block.is_error === true }));
}

/** How many tool results the whole conversation carries (the model's tool calls answered so far). */
export function toolResultCount(request: MessagesRequest): number {
  return request.messages
    .filter((message) => message.role === "user" && Array.isArray(message.content))
    .flatMap((message) => message.content as Json[])
    .filter((block) => block.type === "tool_result").length;
}

function sse(res: ServerResponse, type: string, data: Json): void {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

let messageCount = 0;

function streamReply(
  res: ServerResponse,
  request: MessagesRequest,
  reply: Reply,
  options: FakeOptions,
): void {
  const usage = options.usage ?? { input_tokens: 100, output_tokens: 20 };
  const id = `msg_fake_${++messageCount}`;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  sse(res, "message_start", {
    message: {
      id,
      type: "message",
      role: "assistant",
      model: request.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
    },
  });
  if ("toolUse" in reply) {
    const block = { type: "tool_use", id: `toolu_fake_${messageCount}`, name: reply.toolUse.name, input: {} };
    sse(res, "content_block_start", { index: 0, content_block: block });
    sse(res, "content_block_delta", {
      index: 0,
      delta: { type: "input_json_delta", partial_json: JSON.stringify(reply.toolUse.input) },
    });
  } else if ("text" in reply) {
    sse(res, "content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    sse(res, "content_block_delta", { index: 0, delta: { type: "text_delta", text: reply.text } });
  }
  sse(res, "content_block_stop", { index: 0 });
  sse(res, "message_delta", {
    delta: { stop_reason: "toolUse" in reply ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  sse(res, "message_stop", {});
  res.end();
}

function answer(res: ServerResponse, request: MessagesRequest, reply: Reply, options: FakeOptions): void {
  if ("hang" in reply) return;
  if ("error" in reply) {
    res.writeHead(reply.error.status, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ type: "error", error: { type: reply.error.type, message: reply.error.message } }),
    );
    return;
  }
  streamReply(res, request, reply, options);
}

export async function startFakeAnthropic(script: Script, options: FakeOptions = {}): Promise<FakeAnthropic> {
  const requests: RecordedRequest[] = [];
  const server = await startModelServer(({ method, path, headers, raw }, res) => {
    if (method !== "POST" || !path.startsWith("/v1/messages")) {
      sendJson(res, 404, { type: "error", error: { type: "not_found_error", message: path } });
      return "answered";
    }
    const body = JSON.parse(raw || "{}") as MessagesRequest;
    if (path.startsWith("/v1/messages/count_tokens")) {
      sendJson(res, 200, { input_tokens: 10 });
      return "answered";
    }
    const reply = script(body, requests.length);
    requests.push({ path, headers, body });
    answer(res, body, reply, options);
    return "hang" in reply ? "hanging" : "answered";
  });
  return { url: server.origin, requests, close: server.close };
}
