import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { vouchFor } from "../../auth/in-process";
import type { BoundFetch, McpCaller } from "./registry";

export interface RestCall {
  method: "GET" | "POST" | "PATCH" | "PUT";
  path: string;
  body?: unknown;
}

/** What the REST API answered, for a tool to turn into its result. */
export interface RestAnswer {
  status: number;
  body: unknown;
}

/**
 * A request the caller makes in-process (built with `caller.headers`): for an OAuth caller, vouched for
 * the principal the door proved (auth/in-process.ts), since REST takes no OAuth token itself.
 */
export const asCaller = (request: Request, caller: Pick<McpCaller, "principal">): Request =>
  caller.principal ? vouchFor(request, caller.principal) : request;

/**
 * Runs one REST call in-process as the MCP caller: same key (or, for an OAuth token, the principal it
 * proved, with its grant), same middleware, same rules.
 */
export async function callRest(
  appFetch: BoundFetch,
  origin: string,
  caller: Pick<McpCaller, "headers" | "principal">,
  call: RestCall,
): Promise<RestAnswer> {
  const headers: Record<string, string> = { ...caller.headers, Accept: "application/json" };
  if (call.body !== undefined) headers["Content-Type"] = "application/json";
  const request = new Request(`${origin}/api${call.path}`, {
    method: call.method,
    headers,
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
  });
  const response = await appFetch(asCaller(request, caller));
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text === "" ? null : JSON.parse(text);
  } catch {
    // Not JSON: keep the text, which the error result quotes as it is.
  }
  return { status: response.status, body };
}

const errorTextOf = (body: unknown): string => {
  if (body && typeof body === "object" && "error" in body) {
    const { error, details } = body as { error: unknown; details?: unknown };
    return details === undefined ? String(error) : `${String(error)} ${JSON.stringify(details)}`;
  }
  return typeof body === "string" ? body : JSON.stringify(body);
};

/** A list becomes `{items}`, a scalar or an empty body `{value}`: an object is what every client parses. */
function asJsonObject(body: unknown): object {
  if (Array.isArray(body)) return { items: body };
  return body !== null && typeof body === "object" ? body : { value: body };
}

/**
 * A REST answer as an MCP tool result: the JSON body on success; on failure an error result with the
 * status and the API's own error text (an MCP tool error, so the model reads it and can react).
 * Success text is a JSON object, never a bare scalar (Gemini CLI parses the first text as an object).
 */
export function toolResultOf(answer: RestAnswer, explain?: (answer: RestAnswer) => string | undefined) {
  if (answer.status >= 200 && answer.status < 300) {
    return {
      content: [{ type: "text", text: JSON.stringify(asJsonObject(answer.body)) }],
    } satisfies CallToolResult;
  }
  const hint = explain?.(answer);
  const text = `HTTP ${answer.status}: ${errorTextOf(answer.body)}${hint ? `\n${hint}` : ""}`;
  return { isError: true, content: [{ type: "text", text }] } satisfies CallToolResult;
}
