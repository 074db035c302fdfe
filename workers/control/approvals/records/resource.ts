import type { ApprovalRow } from "../../../db/schema";

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** An approval as every endpoint returns it (hire requests, issue links, the approvals API). */
export const approvalResource = (row: ApprovalRow) => ({
  id: row.id,
  companyId: row.companyId,
  type: row.type,
  status: row.status,
  payload: row.payload,
  requestedByAgentId: row.requestedByAgentId,
  requestedByUserId: row.requestedByUserId,
  decisionNote: row.decisionNote,
  decidedByUserId: row.decidedByUserId,
  decidedAt: isoOrNull(row.decidedAt),
  createdAt: new Date(row.createdAt).toISOString(),
  updatedAt: new Date(row.updatedAt).toISOString(),
});
