import type { ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import type { ToolContext, ToolDomain, ToolScope } from "../tools";

/**
 * One MCP resource template (`issue://{issueId}`, …), defined once and registered by server.ts like
 * the tools. `read` acts as the caller through the REST API, so a resource shows exactly what the
 * caller's key may read; another tenant's id reads as not found.
 */
export interface ResourceDefinition {
  name: string;
  domain: ToolDomain;
  scope: ToolScope;
  /** RFC 6570 template, e.g. `issue://{issueId}`. */
  uriTemplate: string;
  description: string;
  mimeType: string;
  read(ctx: ToolContext, uri: URL, variables: Record<string, string>): Promise<ReadResourceResult>;
}
