import { createRoute, type z } from "@hono/zod-openapi";
import { and, eq, inArray } from "drizzle-orm";
import type { Context } from "hono";
import { agentCredentialsChanged } from "../../auth/agent-key-store";
import { refOf } from "../../core/actor";
import type { AppEnv } from "../../core/env";
import type { Db } from "../../db/client";
import { type ApprovalRow, approvals, type HeartbeatRunRow } from "../../db/schema";
import { forbidden, unprocessable } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json } from "../../http/openapi";
import type { Statement } from "../issues";
import { announceFrom, queueApprovalNotices } from "../line";
import { controlContext, requireBoard } from "../shared";
import { runsQueued } from "../wakes";
import { afterApproved } from "./after-decision";
import { approvalActivity, hireEffects, requesterWake, type Transition } from "./effects";
import { companyAgent, findApproval, hiredAgentId, namedApproval } from "./records";
import { ApprovalParamSchema, ApprovalSchema, DecisionBodySchema, ResubmitBodySchema } from "./schemas";

/** approve, reject, request-revision (board only) and resubmit: the approval's state machine. */
export const approvalDecisionRoutes = createRouter();
const tags = ["Approvals"];

type Decision = "approved" | "rejected";
/** States a decision may be taken from. */
const OPEN: ApprovalRow["status"][] = ["pending", "revision_requested"];

/** `{via: "whatsapp"}` when a member answered on the company's line (auth/in-process.ts); else nothing. */
const viaOf = (c: Context<AppEnv>) => (c.get("answeredVia") ? { via: c.get("answeredVia") ?? null } : {});

/** A transition route; its body is optional (an empty POST is a decision without a note). */
function transitionRoute<B extends z.ZodType>(action: string, summary: string, description: string, body: B) {
  return createRoute({
    method: "post",
    path: `/approvals/{approvalId}/${action}`,
    tags,
    summary,
    description,
    security: controlAuth,
    request: {
      params: ApprovalParamSchema,
      body: { content: { "application/json": { schema: body } }, required: false },
    },
    responses: {
      200: json(ApprovalSchema, "The approval after the change (or unchanged)"),
      ...controlErrors,
      422: controlError("Not allowed from the approval's current status"),
    },
  });
}

/** Commits the state change with its effects; false when another request moved the approval first. */
async function commitTransition(db: Db, update: Statement, effects: Statement[]): Promise<boolean> {
  const [moved] = await db.batch([update, ...effects]);
  return moved.meta.changes === 1;
}

/** The requesting agent, when there is one to wake (never the agent the decision is about). */
async function requesterToWake(db: Db, approval: ApprovalRow, aboutAgentId: string | null) {
  const requesterId = approval.requestedByAgentId;
  if (requesterId === null || requesterId === aboutAgentId) return undefined;
  return companyAgent(db, approval.companyId, requesterId);
}

/** After commit: the Keyring forgets the hired agent's cached state, runners hear about the wake. */
async function afterCommit(c: Context<AppEnv>, hiredId: string | null, run: HeartbeatRunRow | undefined) {
  if (hiredId !== null) await agentCredentialsChanged(c.env, hiredId);
  if (run?.status === "queued") c.executionCtx.waitUntil(runsQueued(c.env, new URL(c.req.url).origin));
}

/** approve / reject: from pending or revision_requested; the same decision again is a no-op. */
async function decide(c: Context<AppEnv>, approvalId: string, decision: Decision, note: string | null) {
  const { actor, db } = controlContext(c);
  const approval = await findApproval(db, actor, approvalId);
  requireBoard(actor, "approve or reject approvals");
  if (approval.status === decision) return approval;
  if (!OPEN.includes(approval.status))
    throw unprocessable(`Only pending or revision requested approvals can be ${decision}`, {
      status: approval.status,
    });

  const now = Date.now();
  const t: Transition = { approval, status: decision, actor: refOf(actor), now };
  const next: ApprovalRow = {
    ...approval,
    status: decision,
    decisionNote: note,
    decidedByUserId: actor.userId,
    decidedAt: now,
    updatedAt: now,
  };
  const update = db
    .update(approvals)
    .set({
      status: decision,
      decisionNote: note,
      decidedByUserId: actor.userId,
      decidedAt: now,
      updatedAt: now,
    })
    .where(and(eq(approvals.id, approval.id), inArray(approvals.status, OPEN)));

  const effects = approvalActivity(db, t, `approval.${decision}`, {
    from: approval.status,
    decisionNote: note,
    ...viaOf(c),
  });
  const hiredId = hiredAgentId(approval);
  const hired = hiredId === null ? undefined : await companyAgent(db, approval.companyId, hiredId);
  if (hired?.status === "pending_approval") effects.push(...hireEffects(db, t, hired));
  const requester = await requesterToWake(db, approval, hired ? hired.id : null);
  const wake = requester ? requesterWake(db, t, requester, `approval_${decision}`) : undefined;
  if (wake) effects.push(...wake.statements);

  if (!(await commitTransition(db, update, effects))) {
    // Another decision committed between our read and our write: answer from what it left.
    const current = await findApproval(db, actor, approval.id);
    if (current.status === decision) return current;
    throw unprocessable(`Only pending or revision requested approvals can be ${decision}`, {
      status: current.status,
    });
  }
  await afterCommit(c, hired?.status === "pending_approval" ? hired.id : null, wake?.run);
  // Only the request whose UPDATE moved the approval gets here: what approval does happens once.
  return decision === "approved" ? afterApproved(c, next) : next;
}

const noteOf = (body: { decisionNote?: string | null }) => body.decisionNote ?? null;

approvalDecisionRoutes.openapi(
  transitionRoute(
    "approve",
    "Approve (board only)",
    "From pending or revision_requested. Approving again answers 200 without changes; approving a " +
      "rejected or cancelled approval is 422. hire_agent: the pending agent becomes idle. The requesting " +
      "agent is woken (reason approval_approved).",
    DecisionBodySchema,
  ),
  async (c) => {
    const row = await decide(c, c.req.valid("param").approvalId, "approved", noteOf(c.req.valid("json")));
    return c.json(await namedApproval(controlContext(c).db, row), 200);
  },
);

approvalDecisionRoutes.openapi(
  transitionRoute(
    "reject",
    "Reject (board only)",
    "From pending or revision_requested. Rejecting again answers 200 without changes; rejecting an " +
      "approved or cancelled approval is 422. hire_agent: the pending agent is terminated and its keys " +
      "revoked. The requesting agent is woken (reason approval_rejected).",
    DecisionBodySchema,
  ),
  async (c) => {
    const row = await decide(c, c.req.valid("param").approvalId, "rejected", noteOf(c.req.valid("json")));
    return c.json(await namedApproval(controlContext(c).db, row), 200);
  },
);

approvalDecisionRoutes.openapi(
  transitionRoute(
    "request-revision",
    "Send back for revision (board only)",
    "pending → revision_requested with the note; any other status is 422. The requesting agent is " +
      "woken (reason approval_revision_requested) so it can revise and resubmit.",
    DecisionBodySchema,
  ),
  async (c) => {
    const { actor, db } = controlContext(c);
    const approval = await findApproval(db, actor, c.req.valid("param").approvalId);
    requireBoard(actor, "request a revision");
    const refuse = (status: string) =>
      unprocessable("Only pending approvals can be sent back for revision", { status });
    if (approval.status !== "pending") throw refuse(approval.status);
    const now = Date.now();
    const note = noteOf(c.req.valid("json"));
    const t: Transition = { approval, status: "revision_requested", actor: refOf(actor), now };
    const fields = {
      status: "revision_requested" as const,
      decisionNote: note,
      decidedByUserId: actor.userId,
      decidedAt: now,
      updatedAt: now,
    };
    const update = db
      .update(approvals)
      .set(fields)
      .where(and(eq(approvals.id, approval.id), eq(approvals.status, "pending")));
    const effects = approvalActivity(db, t, "approval.revision_requested", {
      decisionNote: note,
      ...viaOf(c),
    });
    const requester = await requesterToWake(db, approval, null);
    const wake = requester ? requesterWake(db, t, requester, "approval_revision_requested") : undefined;
    if (wake) effects.push(...wake.statements);
    if (!(await commitTransition(db, update, effects)))
      throw refuse((await findApproval(db, actor, approval.id)).status);
    await afterCommit(c, null, wake?.run);
    return c.json(await namedApproval(db, { ...approval, ...fields }), 200);
  },
);

/** hire_agent payloads name the agent; a revision may change anything but which agent it is. */
function assertSameHire(approval: ApprovalRow, payload: Record<string, unknown>) {
  const before = hiredAgentId(approval);
  const after = hiredAgentId({ type: approval.type, payload });
  if (before !== after)
    throw unprocessable("A resubmitted hire_agent payload must keep the same agentId", { agentId: before });
}

approvalDecisionRoutes.openapi(
  transitionRoute(
    "resubmit",
    "Resubmit a revised approval (the requesting agent, or a board user)",
    "revision_requested → pending; clears decisionNote, decidedByUserId and decidedAt and replaces " +
      "the payload when one is given. Other agents 403; any other status 422.",
    ResubmitBodySchema,
  ),
  async (c) => {
    const { actor, db } = controlContext(c);
    const approval = await findApproval(db, actor, c.req.valid("param").approvalId);
    if (actor.type === "agent" && actor.agentId !== approval.requestedByAgentId)
      throw forbidden("Only board users and the requesting agent may resubmit this approval");
    const refuse = (status: string) =>
      unprocessable("Only approvals with a revision requested can be resubmitted", { status });
    if (approval.status !== "revision_requested") throw refuse(approval.status);
    const { payload } = c.req.valid("json");
    if (payload) assertSameHire(approval, payload);
    const now = Date.now();
    const t: Transition = { approval, status: "pending", actor: refOf(actor), now };
    const fields = {
      status: "pending" as const,
      payload: payload ?? approval.payload,
      decisionNote: null,
      decidedByUserId: null,
      decidedAt: null,
      updatedAt: now,
    };
    const update = db
      .update(approvals)
      .set(fields)
      .where(and(eq(approvals.id, approval.id), eq(approvals.status, "revision_requested")));
    const effects = approvalActivity(db, t, "approval.resubmitted", {
      payloadReplaced: payload !== undefined,
    });
    if (!(await commitTransition(db, update, effects)))
      throw refuse((await findApproval(db, actor, approval.id)).status);
    const resubmitted: ApprovalRow = { ...approval, ...fields };
    // Pending again: those who may decide are asked anew on the company line (a new poll per round).
    await announceFrom(c, approval.companyId, (tx, origin, at) =>
      queueApprovalNotices(tx, resubmitted, origin, at),
    );
    return c.json(await namedApproval(db, resubmitted), 200);
  },
);
