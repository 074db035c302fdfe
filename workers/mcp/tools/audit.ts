import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { membershipRole, redactSecrets } from "../../control/shared";
import { activityActor } from "../../core/actor";
import { database, newId } from "../../db/client";
import { activityLog, type JsonObject } from "../../db/schema";
import type { AnyToolDefinition, ToolContext } from "./registry";

/**
 * The activity log of every MCP tool call (issue 27): who, which tool, the arguments with secrets
 * redacted (control/shared/redact.ts, as every activity row), and the outcome: `ok`, `error` with the
 * HTTP status the tool answered, or `pending_approval` with the approval's id. One `mcp.tool_called`
 * row in the company the call belongs to: an agent's company; for a user key the `companyId` argument
 * when the user is a member of it. A user's call that names no company of theirs (a WhatsApp send on
 * their own session, get_issue) has no company log to go to and is not recorded (docs/decisions.md).
 */
export async function auditToolCall(
  tool: AnyToolDefinition,
  ctx: ToolContext,
  args: Record<string, unknown>,
  run: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  let result: CallToolResult;
  try {
    result = await run();
  } catch (error) {
    await record(tool, ctx, args, { outcome: "error", error: String(error) });
    throw error;
  }
  // A write's row is committed before its answer; a read's may follow it (it changed nothing the
  // caller could act on before the row lands, and the row is most of a read's cost).
  const written = record(tool, ctx, args, outcomeOf(result));
  if (tool.annotations?.readOnlyHint === true) ctx.defer(written);
  else await written;
  return result;
}

/** What a result says happened, from its first text (tools answer JSON, or `HTTP <status>: …`). */
export function outcomeOf(result: CallToolResult): JsonObject {
  const first = result.content?.[0];
  const text = first?.type === "text" ? first.text : "";
  if (result.isError) {
    const status = text.match(/^HTTP (\d{3})/)?.[1];
    return { outcome: "error", ...(status ? { status: Number(status) } : {}), error: text.slice(0, 500) };
  }
  try {
    const body = JSON.parse(text) as { status?: unknown; approvalId?: unknown };
    if (body?.status === "pending_approval")
      return { outcome: "pending_approval", approvalId: String(body.approvalId) };
  } catch {
    // Not JSON: a plain success.
  }
  return { outcome: "ok" };
}

/** The arguments as the log keeps them: secrets redacted; a WhatsApp `sessionId` names a session, not a credential. */
function loggedArguments(args: Record<string, unknown>): JsonObject {
  const { sessionId, ...rest } = args;
  return { ...(sessionId === undefined ? {} : { sessionId }), ...redactSecrets(rest) };
}

async function companyOf(ctx: ToolContext, args: Record<string, unknown>): Promise<string | null> {
  const { actor } = ctx.caller;
  if (actor.type === "agent") return actor.companyId;
  const named = args.companyId;
  if (typeof named !== "string") return null;
  return (await membershipRole(database(ctx.env.DB), actor.userId, named)) ? named : null;
}

async function record(
  tool: AnyToolDefinition,
  ctx: ToolContext,
  args: Record<string, unknown>,
  outcome: JsonObject,
): Promise<void> {
  try {
    const companyId = await companyOf(ctx, args);
    if (companyId === null) return;
    const { actor } = ctx.caller;
    const ref =
      actor.type === "agent"
        ? ({ type: "agent", agentId: actor.agentId, companyId: actor.companyId } as const)
        : ({ type: "board", userId: actor.userId } as const);
    await database(ctx.env.DB)
      .insert(activityLog)
      .values({
        id: newId(),
        companyId,
        ...activityActor(ref),
        action: "mcp.tool_called",
        entityType: "mcp_tool",
        entityId: tool.name,
        details: { tool: tool.name, scope: tool.scope, arguments: loggedArguments(args), ...outcome },
        createdAt: Date.now(),
      });
  } catch (error) {
    // The call's answer matters more than its log line; say why the line is missing.
    console.error(`activity log of ${tool.name} failed`, error);
  }
}
