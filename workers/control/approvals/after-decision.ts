import type { Context } from "hono";
import type { AppEnv } from "../../core/env";
import type { ApprovalRow } from "../../db/schema";

/**
 * What an approval of a type does once it is approved, for types another part of the system owns
 * (MCP registers `whatsapp_send`: the held send goes out). Called only by the request whose
 * conditional UPDATE moved the approval to approved, so at most once per approval whatever the
 * double clicks, retries or concurrent deciders. Answers the approval as it stands afterwards.
 */
export type ApprovedHandler = (c: Context<AppEnv>, approval: ApprovalRow) => Promise<ApprovalRow>;

const handlers = new Map<ApprovalRow["type"], ApprovedHandler>();

export function onApproved(type: ApprovalRow["type"], handler: ApprovedHandler): void {
  handlers.set(type, handler);
}

export function afterApproved(c: Context<AppEnv>, approval: ApprovalRow): Promise<ApprovalRow> {
  const handler = handlers.get(approval.type);
  return handler ? handler(c, approval) : Promise.resolve(approval);
}
