import type { z } from "@hono/zod-openapi";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { announce, type GovernedTool, mcpSettingsOf, queueApprovalNotices } from "../../control/line";
import type { AgentActor } from "../../core/actor";
import { activityActor } from "../../core/actor";
import { database, newId } from "../../db/client";
import {
  type ApprovalRow,
  activityLog,
  approvals,
  type McpToolPolicy,
  type SessionRow,
} from "../../db/schema";
import { callSession } from "../../gateway/sessions";
import { ApiError } from "../../http/errors";
import { refundSend, reserveSend } from "../governance/send-cap";
import { type AnyToolDefinition, defineTool, type ToolContext } from "./registry";
import { type RestAnswer, type RestCall, toolResultOf } from "./rest";
import { paceLineSend } from "./send-pacing";
import { lineAccess, lineCall, namesLineSession, whatsappCall } from "./whatsapp-access";

/**
 * The board's governance of agents' WhatsApp sends (issue 27, docs/mcp.md "Governance"). A user key
 * sends as over REST. An agent key sends only on its company's line, and only as the board's policy
 * for the tool says: `off` refuses, `ask_first` files a board approval and sends nothing (the send
 * happens once, on approval: send-approval.ts), `allowed` sends within the agent's daily cap, paced
 * per session. The default asks first for a recipient who never wrote to the line.
 */

/** A send tool: its REST call, and whom it reaches (for the stranger rule and the approval). */
export interface SendSpec<Input extends z.ZodObject = z.ZodObject> {
  name: GovernedTool;
  description: string;
  inputSchema: Input;
  call(args: z.infer<Input>): RestCall;
  recipient(args: z.infer<Input>): string;
  /**
   * The call only schedules the message: nothing goes out now, so the daily cap and the pacing apply
   * when it does, on that day (durable-objects/messaging/scheduler/agent-sends.ts).
   */
  sendsLater?: boolean;
}

export function defineSendTool<Input extends z.ZodObject>(spec: SendSpec<Input>): AnyToolDefinition {
  return defineTool({
    name: spec.name,
    domain: "whatsapp",
    scope: "send",
    description: spec.description,
    inputSchema: spec.inputSchema,
    annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: true },
    run: (ctx, args) => governedSend(ctx, spec as unknown as SendSpec, args),
  });
}

const refusal = (status: number, error: string): RestAnswer => ({ status, body: { error } });

async function governedSend(
  ctx: ToolContext,
  spec: SendSpec,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const { actor } = ctx.caller;
  const call = spec.call(args);
  if (actor.type !== "agent") return toolResultOf(await whatsappCall(ctx, call));
  const access = await lineAccess(ctx.env, actor.companyId);
  if (!access.ok) return toolResultOf(access.answer);
  if (!namesLineSession(call.path, access.session)) return toolResultOf(refusal(404, "Session not found"));
  const settings = await mcpSettingsOf(database(ctx.env.DB), actor.companyId);
  const recipient = spec.recipient(args);
  const policy = await policyFor(ctx, settings.policies[spec.name], access.session, recipient);
  if (policy === "off")
    return toolResultOf(
      refusal(
        403,
        `The board has turned ${spec.name} off for this company's agents: nothing was sent. ` +
          "Do not retry; ask the board if this send is needed.",
      ),
    );
  if (policy === "ask_first") return pendingApproval(ctx, actor, spec, access.session, recipient, args);
  return toolResultOf(
    await sendOnLine(ctx, { companyId: actor.companyId, agentId: actor.agentId }, call, {
      session: access.session,
      recipient,
      cap: settings.dailySendCap,
      enforceCap: true,
      later: spec.sendsLater === true,
    }),
  );
}

/** The board's setting, with `default` resolved: ask first for a stranger, allowed otherwise. */
async function policyFor(
  ctx: ToolContext,
  setting: McpToolPolicy | "default",
  session: SessionRow,
  recipient: string,
): Promise<McpToolPolicy> {
  if (setting !== "default") return setting;
  return (await wroteFirst(ctx, session, recipient)) ? "allowed" : "ask_first";
}

/**
 * Whether `recipient` ever wrote to the session: a message from them (not from this account) is
 * stored in the SessionDO's chat with them (for a group: anyone in it). Unknown counts as no.
 */
async function wroteFirst(ctx: ToolContext, session: SessionRow, recipient: string): Promise<boolean> {
  try {
    const found = await callSession(ctx.env, session, "message.search", {
      jid: recipient,
      fromMe: false,
      page: 1,
      limit: 1,
    });
    return found.total > 0;
  } catch (error) {
    if (error instanceof ApiError) return false;
    throw error;
  }
}

/** What an approval of a held send carries: enough for the board to judge it and to send it later. */
export interface HeldSend {
  tool: GovernedTool;
  sessionId: string;
  recipient: string;
  arguments: Record<string, unknown>;
}

/** Files the board approval of an `ask_first` send; the answer tells the model not to send again. */
async function pendingApproval(
  ctx: ToolContext,
  actor: AgentActor,
  spec: SendSpec,
  session: SessionRow,
  recipient: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const db = database(ctx.env.DB);
  const now = Date.now();
  const id = newId();
  const payload: HeldSend & Record<string, unknown> = {
    tool: spec.name,
    sessionId: session.sessionId,
    recipient,
    arguments: args,
  };
  const approval: ApprovalRow = {
    id,
    companyId: actor.companyId,
    type: "whatsapp_send",
    status: "pending",
    payload,
    requestedByAgentId: actor.agentId,
    requestedByUserId: null,
    decisionNote: null,
    decidedByUserId: null,
    decidedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  await db.batch([
    db.insert(approvals).values(approval),
    db.insert(activityLog).values({
      id: newId(),
      companyId: actor.companyId,
      ...activityActor({ type: "agent", agentId: actor.agentId, companyId: actor.companyId }),
      action: "approval.created",
      entityType: "approval",
      entityId: id,
      details: { type: "whatsapp_send", tool: spec.name, recipient },
      createdAt: now,
    }),
  ]);
  // The board hears of it on the company's line (a poll to those who may decide).
  await announce(
    { env: ctx.env, origin: ctx.origin, fetch: ctx.appFetch, waitUntil: (promise) => ctx.defer(promise) },
    actor.companyId,
    (tx, origin, at) => queueApprovalNotices(tx, approval, origin, at),
  );
  const text =
    `pending approval ${id}: the board must approve this ${spec.name} to ${recipient} first, so nothing ` +
    "was sent yet. If it is approved it will be sent once, automatically; if rejected, never. Do not " +
    `call ${spec.name} again for this message. You are woken when the board decides.`;
  return {
    content: [
      { type: "text", text: JSON.stringify({ status: "pending_approval", approvalId: id, message: text }) },
    ],
  };
}

/** Who a line send is for: the daily cap is the agent's, in its company. */
export interface LineSender {
  companyId: string;
  agentId: string;
}

/**
 * The send itself, once governance allowed it (or the board approved it): the daily cap, the
 * session's pacing, then the REST call on the line as the owner who linked it. A failed send gives
 * its count back. A send `later` (a schedule) is only created now, marked as this agent's: the cap
 * and the pacing apply when it goes out.
 */
export async function sendOnLine(
  ctx: Pick<ToolContext, "appFetch" | "origin" | "env">,
  sender: LineSender,
  call: RestCall,
  send: { session: SessionRow; recipient: string; cap: number; enforceCap: boolean; later: boolean },
): Promise<RestAnswer> {
  if (send.later) return lineCall(ctx, sender.companyId, call, { ...sender, capEnforced: send.enforceCap });
  const reserved = await reserveSend(ctx.env, sender.agentId, send.cap, { enforce: send.enforceCap });
  if (!reserved.ok) return reserved.answer;
  const paced = await paceLineSend(ctx, sender.companyId, send.session, send.recipient);
  if (!paced.ok) {
    await refundSend(ctx.env, sender.agentId, reserved.day);
    return paced.answer;
  }
  const answer = await lineCall(ctx, sender.companyId, call);
  if (answer.status < 200 || answer.status >= 300) await refundSend(ctx.env, sender.agentId, reserved.day);
  return answer;
}
