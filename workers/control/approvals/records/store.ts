import { and, asc, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { Actor, ActorRef } from "../../../core/actor";
import type { Db } from "../../../db/client";
import {
  type AgentRow,
  APPROVAL_STATUSES,
  type ApprovalRow,
  agents,
  approvals,
  issueApprovals,
  issues,
} from "../../../db/schema";
import { badRequest, unprocessable } from "../../../http/errors";
import { ensureVisible, issueIdsIn } from "../../shared";

/** Loading approvals, what they link to, and the CEO strategy gate other modules ask about. */

type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** The approval named in a path, or the 404 an unknown id or another company's approval gets. */
export async function findApproval(db: Db, actor: Actor, approvalId: string): Promise<ApprovalRow> {
  const row = await db.select().from(approvals).where(eq(approvals.id, approvalId)).get();
  return ensureVisible(db, actor, row, "Approval");
}

/** `pending,revision_requested` → the statuses; an unknown one is a 400 (a typo must not match nothing). */
export function parseApprovalStatuses(raw: string | undefined): ApprovalStatus[] | undefined {
  if (raw === undefined) return undefined;
  const values = [...new Set(raw.split(",").map((value) => value.trim()))].filter((value) => value !== "");
  const unknown = values.filter((value) => !(APPROVAL_STATUSES as readonly string[]).includes(value));
  if (unknown.length > 0)
    throw badRequest(`status: unknown status ${unknown.join(", ")} (one of ${APPROVAL_STATUSES.join(", ")})`);
  return values.length > 0 ? (values as ApprovalStatus[]) : undefined;
}

/** A company's approvals, newest first, optionally only those in `statuses`. */
export function listApprovals(db: Db, companyId: string, statuses: ApprovalStatus[] | undefined) {
  const conditions: SQL[] = [eq(approvals.companyId, companyId)];
  if (statuses) conditions.push(inArray(approvals.status, statuses));
  return db
    .select()
    .from(approvals)
    .where(and(...conditions))
    .orderBy(desc(approvals.createdAt), desc(approvals.id));
}

/** The issues an approval is linked to, oldest link first. */
export async function linkedIssues(db: Db, approvalId: string) {
  const rows = await db
    .select({ issue: issues })
    .from(issueApprovals)
    .innerJoin(issues, eq(issues.id, issueApprovals.issueId))
    .where(eq(issueApprovals.approvalId, approvalId))
    .orderBy(asc(issueApprovals.createdAt), asc(issues.id));
  return rows.map((row) => row.issue);
}

/**
 * Issues to link on create, by id or identifier: all must be issues of the approval's company (else
 * 422, no probing). Answers their ids.
 */
export async function companyIssueIds(db: Db, companyId: string, keys: string[]): Promise<string[]> {
  const wanted = [...new Set(await issueIdsIn(db, companyId, keys))];
  if (wanted.length === 0) return [];
  const found = await db
    .select({ id: issues.id })
    .from(issues)
    .where(and(eq(issues.companyId, companyId), inArray(issues.id, wanted)));
  const known = new Set(found.map((row) => row.id));
  const missing = wanted.filter((id) => !known.has(id));
  if (missing.length > 0) throw unprocessable("issueIds must be issues of this company", { missing });
  return wanted;
}

/** An agent of `companyId`, or undefined (ids of other companies read as unknown). */
export function companyAgent(db: Db, companyId: string, agentId: string): Promise<AgentRow | undefined> {
  return db
    .select()
    .from(agents)
    .where(and(eq(agents.id, agentId), eq(agents.companyId, companyId)))
    .get();
}

/** The agent a hire_agent payload is about (`payload.agentId`), when it names one. */
export function hiredAgentId(approval: Pick<ApprovalRow, "type" | "payload">): string | null {
  if (approval.type !== "hire_agent") return null;
  const agentId = approval.payload.agentId;
  return typeof agentId === "string" ? agentId : null;
}

/** A hire_agent approval must be about an agent of the company that is still waiting to be hired. */
export async function assertHirePayload(db: Db, companyId: string, payload: Record<string, unknown>) {
  const agentId = hiredAgentId({ type: "hire_agent", payload });
  if (agentId === null) throw unprocessable("A hire_agent payload needs agentId (the pending agent)");
  const agent = await companyAgent(db, companyId, agentId);
  if (!agent) throw unprocessable("payload.agentId must be an agent of this company", { agentId });
  if (agent.status !== "pending_approval")
    throw unprocessable("payload.agentId names an agent that is not pending_approval", {
      agentId,
      status: agent.status,
    });
}

export const CEO_STRATEGY_REQUIRED =
  "CEO strategy not yet approved: submit an approve_ceo_strategy approval and wait for the board";

/**
 * The approve_ceo_strategy gate (issue 7): a CEO agent may not move issues to in_progress until one
 * approve_ceo_strategy approval it requested has been approved. Board users and other agents pass.
 * One D1 read (the caller's role and the approval's existence together), skipped when the key
 * already proved a role other than ceo; called only for moves to in_progress, inside the IssueDO that
 * makes the move.
 */
export async function assertCeoMayStartWork(db: Db, actor: ActorRef): Promise<void> {
  if (actor.type !== "agent" || (actor.role !== undefined && actor.role !== "ceo")) return;
  const row = await db
    .select({
      role: agents.role,
      // Correlated on the company so approvals_company_status_idx serves it (written out: drizzle
      // renders an interpolated column unqualified, which would bind to approvals here).
      approved: sql<number>`exists(
        select 1 from approvals
        where approvals.company_id = agents.company_id
          and approvals.status = 'approved'
          and approvals.requested_by_agent_id = ${actor.agentId}
          and approvals.type = 'approve_ceo_strategy')`,
    })
    .from(agents)
    .where(eq(agents.id, actor.agentId))
    .get();
  if (row?.role === "ceo" && !row.approved)
    throw unprocessable(CEO_STRATEGY_REQUIRED, {
      agentId: actor.agentId,
      requiredApprovalType: "approve_ceo_strategy",
    });
}
