import { ErrorCode, McpError, type ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import { chatHistory, type RestAnswer, type ToolContext, toolResultOf } from "../tools";
import type { ResourceDefinition } from "./registry";

/** How many of a chat's latest messages the resource shows; read_messages pages further back. */
export const CHAT_RESOURCE_MESSAGES = 50;

/** MCP's "resource not found" (the specification's code; the SDK names none for it). */
const RESOURCE_NOT_FOUND = -32002;

/** A refused read as the JSON-RPC error resources/read answers, with the API's own words. */
function readError(answer: RestAnswer): McpError {
  const text = toolResultOf(answer).content[0]?.text ?? `HTTP ${answer.status}`;
  if (answer.status === 404) return new McpError(RESOURCE_NOT_FOUND, text);
  return new McpError(answer.status < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError, text);
}

/** A template variable as it was meant: clients may percent-encode the jid's `@`. */
function decoded(value: string | undefined, name: string): string {
  try {
    return decodeURIComponent(value ?? "");
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `${name} is not a valid percent-encoded value`);
  }
}

/** `chat://{sessionId}/{jid}`: a chat's latest messages, as read_messages shows them. */
export const chatResource: ResourceDefinition = {
  name: "chat",
  domain: "whatsapp",
  scope: "read",
  uriTemplate: "chat://{sessionId}/{jid}",
  description:
    `A WhatsApp chat's latest ${CHAT_RESOURCE_MESSAGES} messages, oldest → newest, compact as read_messages ` +
    "answers them ({messages, nextCursor}; pass nextCursor to read_messages as before for older ones). " +
    "sessionId as list_sessions shows it; jid like 628123456789@s.whatsapp.net or 120363…@g.us.",
  mimeType: "application/json",
  async read(ctx: ToolContext, uri: URL, variables: Record<string, string>): Promise<ReadResourceResult> {
    const answer = await chatHistory(ctx, {
      sessionId: decoded(variables.sessionId, "sessionId"),
      jid: decoded(variables.jid, "jid"),
      limit: CHAT_RESOURCE_MESSAGES,
    });
    if (answer.status < 200 || answer.status >= 300) throw readError(answer);
    return {
      contents: [{ uri: uri.toString(), mimeType: "application/json", text: JSON.stringify(answer.body) }],
    };
  },
};
