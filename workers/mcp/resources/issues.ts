import { ErrorCode, McpError, type ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import { issuePath, type RestAnswer, readIssueWithComments, restAs, type ToolContext } from "../tools";
import { type IssueForMarkdown, issueMarkdown } from "./issue-markdown";
import type { ResourceDefinition } from "./registry";

/** Comments an issue resource shows; get_issue pages through the rest. */
const RESOURCE_COMMENTS = 100;

/**
 * A refused read as a resource error: another company's issue is "not found" exactly like a missing
 * one (never its content), the code the SDK itself uses for an unknown resource (InvalidParams).
 */
function readError(uri: URL, answer: RestAnswer): McpError {
  if (answer.status === 404) return new McpError(ErrorCode.InvalidParams, `Resource ${uri.href} not found`);
  const error = (answer.body as { error?: unknown })?.error;
  return new McpError(
    ErrorCode.InvalidParams,
    `Resource ${uri.href}: HTTP ${answer.status}: ${String(error)}`,
  );
}

/** Agent names by id for the company, so the markdown says who wrote what (empty if unreadable). */
async function agentNames(ctx: ToolContext, companyId: string): Promise<Map<string, string>> {
  const listed = await restAs(ctx, {
    method: "GET",
    path: `/companies/${encodeURIComponent(companyId)}/agents`,
  });
  const agents = listed.status === 200 ? (listed.body as Array<{ id: string; name: string }>) : [];
  return new Map(agents.map((agent) => [agent.id, agent.name]));
}

async function readIssue(ctx: ToolContext, uri: URL, issueId: string): Promise<ReadResourceResult> {
  const answer = await readIssueWithComments(ctx, issueId, { limit: RESOURCE_COMMENTS });
  if (answer.status !== 200) throw readError(uri, answer);
  const issue = answer.body as IssueForMarkdown;
  const text = issueMarkdown(issue, await agentNames(ctx, issue.companyId));
  return { contents: [{ uri: uri.href, mimeType: "text/markdown", text }] };
}

async function readDocument(ctx: ToolContext, uri: URL, issueId: string, key: string) {
  const path = `${issuePath(issueId)}/documents/${encodeURIComponent(key)}`;
  const answer = await restAs(ctx, { method: "GET", path });
  if (answer.status !== 200) throw readError(uri, answer);
  const document = answer.body as { body: string; format: string };
  const mimeType = document.format === "markdown" ? "text/markdown" : "text/plain";
  return { contents: [{ uri: uri.href, mimeType, text: document.body }] } satisfies ReadResourceResult;
}

const variable = (variables: Record<string, string>, name: string) =>
  decodeURIComponent(variables[name] ?? "");

/** An issue and its documents as resources, read as the caller through the REST API. */
export const issueResources: ResourceDefinition[] = [
  {
    name: "issue",
    domain: "control",
    scope: "read",
    uriTemplate: "issue://{issueId}",
    description:
      "An issue by id or identifier (issue://ACM-12) as markdown: status, priority, assignee, ancestors " +
      "(why it exists), project, goal, blockers, description, and its first 100 comments with their authors.",
    mimeType: "text/markdown",
    read: (ctx, uri, variables) => readIssue(ctx, uri, variable(variables, "issueId")),
  },
  {
    name: "issue-document",
    domain: "control",
    scope: "read",
    uriTemplate: "issue://{issueId}/documents/{key}",
    description:
      "An issue document's current body (issue://ACM-12/documents/plan): markdown, or text/plain for a " +
      "text document. Its revisions and latestRevisionId: the get_document tool.",
    mimeType: "text/markdown",
    read: (ctx, uri, variables) =>
      readDocument(ctx, uri, variable(variables, "issueId"), variable(variables, "key")),
  },
];
