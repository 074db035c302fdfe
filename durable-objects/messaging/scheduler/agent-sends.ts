import { activityActor } from "../../../workers/core/actor";
import type { LineAgentSend } from "../../../workers/core/principal";
import { database, newId } from "../../../workers/db/client";
import { activityLog } from "../../../workers/db/schema";
import { dailySendCapOf, refundSend, reserveSend } from "../../../workers/mcp/governance/send-cap";
import { lineBusy, TYPING_MS, takeLineTurn } from "../../../workers/mcp/governance/send-turns";
import type { SessionContext } from "../context";
import type { ScheduledRow } from "./store";

/**
 * An agent's scheduled message (schedule_message over MCP) goes out under the same governance as its
 * immediate send (docs/mcp.md "Governance"): the board's policy was applied when it was scheduled;
 * here, when it is sent, it takes one send of the agent's daily cap on that UTC day (with the cap the
 * company has then; a schedule the board approved counts but is not refused, as an approved send),
 * then the line's next turn and "typing…". A send the cap refuses fails the occurrence with the reason
 * and an activity-log entry; a full queue puts it off to when the line has room.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const sentForOf = (row: ScheduledRow): LineAgentSend | null =>
  row.sent_for ? (JSON.parse(row.sent_for) as LineAgentSend) : null;

export type AgentTurn =
  | { kind: "go"; day: string }
  | { kind: "refused"; error: string }
  | { kind: "later"; at: number; error: string };

export async function takeAgentTurn(
  ctx: SessionContext,
  row: ScheduledRow,
  agent: LineAgentSend,
): Promise<AgentTurn> {
  const cap = await dailySendCapOf(ctx.env, agent.companyId);
  const reserved = await reserveSend(ctx.env, agent.agentId, cap, {
    enforce: agent.capEnforced,
    now: ctx.now(),
  });
  if (!reserved.ok) return { kind: "refused", error: reserved.answer.body.error };
  const turn = await takeLineTurn(ctx.env, ctx.sessionId, ctx.now());
  if (!turn.ok) {
    await refundSend(ctx.env, agent.agentId, reserved.day);
    return { kind: "later", at: turn.retryAt, error: lineBusy(turn.retryAt) };
  }
  const wait = turn.typingAt - ctx.now();
  if (wait > 0) await sleep(wait);
  // Typing is a courtesy: a failure to show it is no reason not to send.
  await ctx.wa({ op: "presence", chat: row.jid, presence: "composing" }).catch(() => undefined);
  await sleep(TYPING_MS);
  return { kind: "go", day: reserved.day };
}

/** Gives the send back: the occurrence did not go out (failed, retried later, or changed meanwhile). */
export const giveBack = (ctx: SessionContext, agent: LineAgentSend, day: string): Promise<void> =>
  refundSend(ctx.env, agent.agentId, day);

/** The company's activity log says the agent's scheduled message was not sent, and why. */
export async function logRefusedSend(
  ctx: SessionContext,
  row: ScheduledRow,
  agent: LineAgentSend,
  error: string,
): Promise<void> {
  const { slug } = await ctx.config();
  await database(ctx.env.DB)
    .insert(activityLog)
    .values({
      id: newId(),
      companyId: agent.companyId,
      ...activityActor({ type: "agent", agentId: agent.agentId, companyId: agent.companyId }),
      action: "whatsapp.scheduled_send_failed",
      entityType: "scheduled_message",
      entityId: row.id,
      details: { scheduledMessageId: row.id, sessionId: slug, jid: row.jid, error },
      createdAt: ctx.now(),
    });
}
