import { and, eq } from "drizzle-orm";
import { authorColumns } from "../../core/actor";
import type { Db } from "../../db/client";
import { type ApprovalRow, approvals, issueApprovals } from "../../db/schema";
import { notFound } from "../../http/errors";
import { namedApproval } from "../approvals/records";
import type { IssueOpHandler, JsonValue } from "./operations";
import { issueActivity } from "./store";

const APPROVAL_NOT_FOUND = "Approval not found";

/** The payload column holds parsed JSON, typed only as an object of unknowns. */
const approvalJson = async (db: Db, row: ApprovalRow) => (await namedApproval(db, row)) as JsonValue;

/** Only an approval of the issue's own company can be linked; any other id reads as unknown. */
function approvalOfCompany(db: Db, companyId: string, approvalId: string): Promise<ApprovalRow | undefined> {
  return db
    .select()
    .from(approvals)
    .where(and(eq(approvals.id, approvalId), eq(approvals.companyId, companyId)))
    .get();
}

function findLink(db: Db, issueId: string, approvalId: string) {
  return db
    .select({ approvalId: issueApprovals.approvalId })
    .from(issueApprovals)
    .where(and(eq(issueApprovals.issueId, issueId), eq(issueApprovals.approvalId, approvalId)))
    .get();
}

/** Links an approval; linking one that is already linked changes nothing and answers 200. */
export const linkApproval: IssueOpHandler<"linkApproval"> = async ({ db, issue, op, now }) => {
  const approval = await approvalOfCompany(db, issue.companyId, op.approvalId);
  if (!approval) throw notFound(APPROVAL_NOT_FOUND);
  if (await findLink(db, issue.id, approval.id))
    return { status: 200, body: await approvalJson(db, approval) };
  const author = authorColumns(op.actor);
  await db.batch([
    db.insert(issueApprovals).values({
      issueId: issue.id,
      approvalId: approval.id,
      companyId: issue.companyId,
      linkedByUserId: author.userId,
      linkedByAgentId: author.agentId,
      createdAt: now,
    }),
    issueActivity(db, issue, op.actor, "issue.approval_linked", { approvalId: approval.id }, now),
  ]);
  return { status: 201, body: await approvalJson(db, approval) };
};

export const unlinkApproval: IssueOpHandler<"unlinkApproval"> = async ({ db, issue, op, now }) => {
  if (!(await findLink(db, issue.id, op.approvalId))) throw notFound("Approval is not linked to this issue");
  await db.batch([
    db
      .delete(issueApprovals)
      .where(and(eq(issueApprovals.issueId, issue.id), eq(issueApprovals.approvalId, op.approvalId))),
    issueActivity(db, issue, op.actor, "issue.approval_unlinked", { approvalId: op.approvalId }, now),
  ]);
  return { status: 200, body: { unlinked: true, approvalId: op.approvalId } };
};
