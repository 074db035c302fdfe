import { eq } from "drizzle-orm";
import { onApproved } from "../../control/approvals";
import { mcpSettingsOf } from "../../control/line";
import { activityActor } from "../../core/actor";
import { database, newId } from "../../db/client";
import { type ApprovalRow, activityLog, approvals, type JsonObject } from "../../db/schema";
import type { AppFetch, ToolContext } from "./registry";
import type { RestAnswer } from "./rest";
import { type HeldSend, sendOnLine } from "./send-governance";
import { lineAccess, namesLineSession } from "./whatsapp-access";
import { SEND_SPECS } from "./whatsapp-send";

/**
 * What approving a `whatsapp_send` approval does: the held send goes out on the company's line,
 * exactly as the agent's call would have (the tool's own schema and REST call, as the owner who
 * linked the line, counted against the agent's daily cap, paced). The approvals module calls this
 * only from the request whose UPDATE moved the approval to approved, so a double approve, a retry or
 * two deciders at once send it once. Its outcome is recorded on the approval as `payload.delivery`:
 * `{status: "sent", messageId}` or `{status: "failed", error}` (a failed send is not retried).
 */
export function sendApprovedMessages(appFetch: AppFetch): void {
  onApproved("whatsapp_send", async (c, approval) => {
    const ctx = {
      appFetch: (request: Request) => appFetch(request, c.env, c.executionCtx),
      origin: new URL(c.req.url).origin,
      env: c.env,
    };
    const delivery = await sendHeld(ctx, approval);
    return recordDelivery(ctx, approval, delivery);
  });
}

type Delivery =
  | { status: "sent"; messageId: string | null; sentAt: string }
  | { status: "failed"; error: string };

const failed = (error: string): Delivery => ({ status: "failed", error });

async function sendHeld(ctx: Pick<ToolContext, "appFetch" | "origin" | "env">, approval: ApprovalRow) {
  const held = approval.payload as Partial<HeldSend>;
  const spec = held.tool ? SEND_SPECS.get(held.tool) : undefined;
  if (!spec) return failed(`Unknown send tool ${String(held.tool)}`);
  const parsed = spec.inputSchema.safeParse(held.arguments);
  if (!parsed.success) return failed(`The held arguments are no longer valid: ${parsed.error.message}`);
  if (!approval.requestedByAgentId) return failed("No requesting agent");
  const access = await lineAccess(ctx.env, approval.companyId);
  if (!access.ok) return failed(errorOf(access.answer));
  const call = spec.call(parsed.data);
  if (!namesLineSession(call.path, access.session))
    return failed("The company's line is another session now: the held send names one that is not the line");
  const { dailySendCap } = await mcpSettingsOf(database(ctx.env.DB), approval.companyId);
  const answer = await sendOnLine(
    ctx,
    { companyId: approval.companyId, agentId: approval.requestedByAgentId },
    call,
    {
      session: access.session,
      recipient: spec.recipient(parsed.data),
      cap: dailySendCap,
      enforceCap: false,
      later: spec.sendsLater === true,
    },
  );
  if (answer.status < 200 || answer.status >= 300) return failed(`HTTP ${answer.status}: ${errorOf(answer)}`);
  const data = (answer.body as { data?: { id?: unknown } } | null)?.data;
  const messageId = typeof data?.id === "string" ? data.id : null;
  return { status: "sent", messageId, sentAt: new Date().toISOString() } satisfies Delivery;
}

const errorOf = (answer: RestAnswer): string => {
  const body = answer.body as { error?: unknown; message?: unknown } | null;
  return String(body?.error ?? body?.message ?? JSON.stringify(answer.body));
};

/** The delivery on the approval (and in the activity log), for the board and the agent to read. */
async function recordDelivery(
  ctx: Pick<ToolContext, "env">,
  approval: ApprovalRow,
  delivery: Delivery,
): Promise<ApprovalRow> {
  const db = database(ctx.env.DB);
  const payload: JsonObject = { ...approval.payload, delivery };
  const now = Date.now();
  await db.batch([
    db.update(approvals).set({ payload }).where(eq(approvals.id, approval.id)),
    db.insert(activityLog).values({
      id: newId(),
      companyId: approval.companyId,
      // The board user whose approval sent it.
      ...activityActor({ type: "board", userId: approval.decidedByUserId ?? "unknown" }),
      action: delivery.status === "sent" ? "approval.whatsapp_sent" : "approval.whatsapp_send_failed",
      entityType: "approval",
      entityId: approval.id,
      details: { ...delivery },
      createdAt: now,
    }),
  ]);
  return { ...approval, payload };
}
