// A local stand-in for the Gemini API, the far end of the network for the real `gemini` CLI (pointed at
// it with GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:<port>, a dummy key). It answers
// POST /v1beta/models/{model}:streamGenerateContent?alt=sse with the SSE stream the API sends (one
// `data:` chunk of candidates with the model's parts and usageMetadata), or an API error, or nothing
// at all (a hung model), as the test's script says, and records every request so a test can see what
// the CLI sent. Anything else (the CLI asks for nothing else with an API key, checked with 0.61.0) is
// a 404.
import type { ServerResponse } from "node:http";
import { type RecordedRequest as ModelRequestRecord, sendJson, startModelServer } from "./server.ts";

export type Json = Record<string, unknown>;

export interface GenerateContentRequest {
  contents: Json[];
  systemInstruction?: unknown;
  tools?: Json[];
  [field: string]: unknown;
}

export type RecordedRequest = ModelRequestRecord<GenerateContentRequest> & { model: string };

export type Reply =
  | { text: string }
  /** A function call by the tool's name, its arguments as the model writes them. */
  | { call: { name: string; args: Json } }
  | { error: { status: number; message: string } }
  /** Never answers: the model hangs. */
  | { hang: true };

/** Decides the reply to each generate request (`index` counts them from 0). */
export type Script = (request: GenerateContentRequest, index: number) => Reply;

export interface FakeGemini {
  /** The base URL, as GOOGLE_GEMINI_BASE_URL. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface FakeOptions {
  /** Token counts every answer reports (the Gemini API's usageMetadata names). */
  usage?: { promptTokenCount: number; cachedContentTokenCount?: number; candidatesTokenCount: number };
}

/** Every text the request carries: system instruction and contents (to see what reached the model). */
export function requestText(request: GenerateContentRequest): string {
  return JSON.stringify([request.systemInstruction ?? null, request.contents]);
}

/** The function responses the request's contents carry (what the CLI's tool runs returned). */
export function functionResponses(request: GenerateContentRequest): string[] {
  return (request.contents ?? []).flatMap((content) =>
    (Array.isArray(content.parts) ? (content.parts as Json[]) : [])
      .filter((part) => part.functionResponse !== undefined)
      .map((part) => JSON.stringify(part.functionResponse)),
  );
}

const ROUTE = /^\/v1beta\/models\/([^/:?]+):streamGenerateContent(\?|$)/;

function streamReply(
  res: ServerResponse,
  model: string,
  reply: { text: string } | { call: { name: string; args: Json } },
  options: FakeOptions,
): void {
  const usage = options.usage ?? { promptTokenCount: 100, candidatesTokenCount: 20 };
  const part = "call" in reply ? { functionCall: { name: reply.call.name, args: reply.call.args } } : reply;
  const chunk = {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { ...usage, totalTokenCount: usage.promptTokenCount + usage.candidatesTokenCount },
    modelVersion: model,
  };
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
  res.end();
}

export async function startFakeGemini(script: Script, options: FakeOptions = {}): Promise<FakeGemini> {
  const requests: RecordedRequest[] = [];
  const server = await startModelServer(({ method, path, headers, raw }, res) => {
    const model = method === "POST" ? path.match(ROUTE)?.[1] : undefined;
    if (!model) {
      sendJson(res, 404, {
        error: { code: 404, message: `no route ${method} ${path}`, status: "NOT_FOUND" },
      });
      return "answered";
    }
    const body = JSON.parse(raw || "{}") as GenerateContentRequest;
    const reply = script(body, requests.length);
    requests.push({ path, headers, body, model: decodeURIComponent(model) });
    if ("hang" in reply) return "hanging";
    if ("error" in reply)
      sendJson(res, reply.error.status, {
        error: { code: reply.error.status, message: reply.error.message, status: "INVALID_ARGUMENT" },
      });
    else streamReply(res, decodeURIComponent(model), reply, options);
    return "answered";
  });
  return { url: server.origin, requests, close: server.close };
}
