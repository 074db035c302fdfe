import type { Db } from "../../../db/client";
import type { ApprovalRow } from "../../../db/schema";
import { type ActorNames, actorNames, nameOf } from "../../shared";

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * An approval as every endpoint returns it (hire requests, issue links, the approvals API), with the
 * display names of who requested and who decided it (null when nobody did, or the account is gone).
 */
export const approvalResource = (row: ApprovalRow, names: ActorNames) => ({
  id: row.id,
  companyId: row.companyId,
  type: row.type,
  status: row.status,
  payload: row.payload,
  requestedByAgentId: row.requestedByAgentId,
  requestedByUserId: row.requestedByUserId,
  requestedByName: nameOf(names, row.requestedByUserId, row.requestedByAgentId),
  decisionNote: row.decisionNote,
  decidedByUserId: row.decidedByUserId,
  decidedByName: names.user(row.decidedByUserId),
  decidedAt: isoOrNull(row.decidedAt),
  createdAt: new Date(row.createdAt).toISOString(),
  updatedAt: new Date(row.updatedAt).toISOString(),
});

/** Approvals of one company as answered, their people named in one batched read for the list. */
export async function namedApprovals(db: Db, rows: readonly ApprovalRow[]) {
  const companyId = rows[0]?.companyId;
  if (companyId === undefined) return [];
  const names = await actorNames(db, companyId, {
    userIds: rows.flatMap((row) => [row.requestedByUserId, row.decidedByUserId]),
    agentIds: rows.map((row) => row.requestedByAgentId),
  });
  return rows.map((row) => approvalResource(row, names));
}

export async function namedApproval(db: Db, row: ApprovalRow) {
  const names = await actorNames(db, row.companyId, {
    userIds: [row.requestedByUserId, row.decidedByUserId],
    agentIds: [row.requestedByAgentId],
  });
  return approvalResource(row, names);
}
