// A local stand-in for an OpenAI-compatible server (what Ollama, vLLM, LiteLLM and OpenRouter speak):
// POST /v1/chat/completions answered with the Chat Completions stream (chat.completion.chunk deltas:
// the assistant's text or a tool call, then the finish reason, then — asked for with
// stream_options.include_usage — a usage chunk, then [DONE]), and GET /v1/models with the models it
// serves. The far end of the network for the real `opencode` CLI with a provider of its own; it
// records every request so a test can see what the CLI sent (and with which key).
import type { ServerResponse } from "node:http";
import { type RecordedRequest, sendJson, startModelServer } from "./server.ts";

export type Json = Record<string, unknown>;

export interface ChatRequest {
  model: string;
  messages: Array<{ role: string; content?: unknown; tool_calls?: unknown[] }>;
  tools?: Json[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [field: string]: unknown;
}

export type ChatReply = { text: string } | { call: { name: string; arguments: Json } };

export interface FakeCompatible {
  /** The base URL with /v1, as a provider's baseURL. */
  readonly url: string;
  readonly requests: Array<RecordedRequest<ChatRequest>>;
  /** Requests for the models list, with their headers. */
  readonly modelListings: Array<RecordedRequest<null>>;
  close(): Promise<void>;
}

/** Every text the request carries (to see what reached the model). */
export const chatText = (request: ChatRequest): string => JSON.stringify(request.messages);

/** How many tool results the conversation carries. */
export const toolResults = (request: ChatRequest): number =>
  request.messages.filter((message) => message.role === "tool").length;

let completions = 0;

function chunk(res: ServerResponse, id: string, model: string, fields: Json): void {
  res.write(
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model, ...fields })}\n\n`,
  );
}

function streamReply(res: ServerResponse, request: ChatRequest, reply: ChatReply, usage: Usage): void {
  const id = `chatcmpl-fake-${++completions}`;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const delta =
    "text" in reply
      ? { role: "assistant", content: reply.text }
      : {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              index: 0,
              id: `call_fake_${completions}`,
              type: "function",
              function: { name: reply.call.name, arguments: JSON.stringify(reply.call.arguments) },
            },
          ],
        };
  chunk(res, id, request.model, { choices: [{ index: 0, delta, finish_reason: null }] });
  const finish = "text" in reply ? "stop" : "tool_calls";
  chunk(res, id, request.model, { choices: [{ index: 0, delta: {}, finish_reason: finish }] });
  if (request.stream_options?.include_usage)
    chunk(res, id, request.model, {
      choices: [],
      usage: {
        prompt_tokens: usage.prompt,
        completion_tokens: usage.completion,
        total_tokens: usage.prompt + usage.completion,
      },
    });
  res.write("data: [DONE]\n\n");
  res.end();
}

interface Usage {
  prompt: number;
  completion: number;
}

export async function startFakeCompatible(
  script: (request: ChatRequest) => ChatReply,
  options: { models: string[]; usage?: Usage },
): Promise<FakeCompatible> {
  const requests: Array<RecordedRequest<ChatRequest>> = [];
  const modelListings: Array<RecordedRequest<null>> = [];
  const usage = options.usage ?? { prompt: 1_000, completion: 100 };
  const server = await startModelServer(({ method, path, headers, raw }, res) => {
    if (method === "GET" && path === "/v1/models") {
      modelListings.push({ path, headers, body: null });
      sendJson(res, 200, {
        object: "list",
        data: options.models.map((id) => ({ id, object: "model", created: 1, owned_by: "fake" })),
      });
      return "answered";
    }
    if (method !== "POST" || !path.startsWith("/v1/chat/completions")) {
      sendJson(res, 404, { error: { message: `no route ${method} ${path}`, type: "not_found" } });
      return "answered";
    }
    const body = JSON.parse(raw || "{}") as ChatRequest;
    requests.push({ path, headers, body });
    streamReply(res, body, script(body), usage);
    return "answered";
  });
  return { url: `${server.origin}/v1`, requests, modelListings, close: server.close };
}
