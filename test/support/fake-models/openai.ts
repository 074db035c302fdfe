// A local stand-in for the OpenAI Responses API, the far end of the network for the real `codex` CLI
// (a model provider whose base_url is http://127.0.0.1:<port>/v1, a dummy key). It answers
// POST /v1/responses with the SSE stream the API sends (response.created, output items added and
// done, text deltas, response.completed with usage), or an API error, or nothing at all (a hung
// model), as the test's script says, and records every request so a test can see what the CLI sent.
import type { ServerResponse } from "node:http";
import { type RecordedRequest as ModelRequestRecord, sendJson, startModelServer } from "./server.ts";

export type Json = Record<string, unknown>;

export type Call = { name: string; arguments: Json; namespace?: string };

export interface ResponsesRequest {
  model: string;
  instructions?: unknown;
  input: Json[];
  tools?: Json[];
  [field: string]: unknown;
}

export type RecordedRequest = ModelRequestRecord<ResponsesRequest>;

export type Reply =
  | { text: string }
  /**
   * A function call by the tool's name, its arguments as the model writes them; `namespace` for a
   * function of a namespace tool (Codex offers an MCP server's tools as namespace mcp__<server>).
   */
  | { call: Call }
  | { error: { status: number; message: string } }
  /** Never answers: the model hangs. */
  | { hang: true };

/** Decides the reply to each responses request (`index` counts them from 0). */
export type Script = (request: ResponsesRequest, index: number) => Reply;

export interface FakeOpenAI {
  /** The base URL with /v1, as a provider's base_url. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface FakeOptions {
  /** Token counts every answer reports. */
  usage?: { input_tokens: number; cached_tokens?: number; output_tokens: number };
}

/** Every text the request carries: instructions and input items (to see what reached the model). */
export function requestText(request: ResponsesRequest): string {
  return JSON.stringify([request.instructions ?? null, request.input]);
}

/** The outputs of function calls the request's input carries (what the CLI's tool runs returned). */
export function callOutputs(request: ResponsesRequest): string[] {
  return (request.input ?? [])
    .filter((item) => item.type === "function_call_output" || item.type === "custom_tool_call_output")
    .map((item) => JSON.stringify(item.output ?? ""));
}

function sse(res: ServerResponse, type: string, data: Json): void {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

let responseCount = 0;

function outputItem(reply: { text: string } | { call: Call }, n: number): Json {
  if ("call" in reply)
    return {
      type: "function_call",
      id: `fc_fake_${n}`,
      call_id: `call_fake_${n}`,
      name: reply.call.name,
      ...(reply.call.namespace ? { namespace: reply.call.namespace } : {}),
      arguments: JSON.stringify(reply.call.arguments),
      status: "completed",
    };
  return {
    type: "message",
    id: `msg_fake_${n}`,
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: reply.text, annotations: [] }],
  };
}

function streamReply(
  res: ServerResponse,
  request: ResponsesRequest,
  reply: { text: string } | { call: Call },
  options: FakeOptions,
): void {
  const n = ++responseCount;
  const usage = options.usage ?? { input_tokens: 100, output_tokens: 20 };
  const response = { id: `resp_fake_${n}`, object: "response", model: request.model, status: "in_progress" };
  const item = outputItem(reply, n);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  sse(res, "response.created", { response });
  sse(res, "response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress" } });
  if ("text" in reply)
    sse(res, "response.output_text.delta", {
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      delta: reply.text,
    });
  sse(res, "response.output_item.done", { output_index: 0, item });
  sse(res, "response.completed", {
    response: {
      ...response,
      status: "completed",
      output: [item],
      usage: {
        input_tokens: usage.input_tokens,
        input_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
        output_tokens: usage.output_tokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.input_tokens + usage.output_tokens,
      },
    },
  });
  res.end();
}

function answer(res: ServerResponse, request: ResponsesRequest, reply: Reply, options: FakeOptions): void {
  if ("hang" in reply) return;
  if ("error" in reply) {
    res.writeHead(reply.error.status, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        error: { message: reply.error.message, type: "invalid_request_error", code: null, param: null },
      }),
    );
    return;
  }
  streamReply(res, request, reply, options);
}

export async function startFakeOpenAI(script: Script, options: FakeOptions = {}): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  const server = await startModelServer(({ method, path, headers, raw }, res) => {
    if (method !== "POST" || !path.startsWith("/v1/responses")) {
      sendJson(res, 404, { error: { message: `no route ${method} ${path}`, type: "not_found" } });
      return "answered";
    }
    const body = JSON.parse(raw || "{}") as ResponsesRequest;
    const reply = script(body, requests.length);
    requests.push({ path, headers, body });
    answer(res, body, reply, options);
    return "hang" in reply ? "hanging" : "answered";
  });
  return { url: `${server.origin}/v1`, requests, close: server.close };
}
