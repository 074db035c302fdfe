/**
 * WhatsApp's own limits on operations, checked before the network is asked. Real WhatsApp does not
 * always refuse (a late "delete for everyone" is silently ignored by the receivers), so the bridge
 * refuses up front, the same way on Baileys and on the simulator.
 */
import { GROUP_JID, type MessageRef, type OutgoingContent } from "./messaging.ts";
import type { Operation } from "./operations.ts";
import { OperationError } from "./seam.ts";

/** "Delete for everyone" is offered for about two days after sending. */
export const DELETE_WINDOW_MS = 2 * 24 * 60 * 60 * 1000;
/** Edits are accepted for 15 minutes after sending. */
export const EDIT_WINDOW_MS = 15 * 60 * 1000;

export const isGroupJid = (jid: string) => GROUP_JID.test(jid);

export type GroupOperation = Extract<Operation, { op: `group.${string}` }>;

export function isGroupOperation(operation: Operation): operation is GroupOperation {
  return operation.op.startsWith("group.");
}

export function assertDeletable(target: MessageRef, now: number): void {
  if (!target.fromMe && !isGroupJid(target.chat)) {
    throw new OperationError(400, "only your own messages can be deleted for everyone");
  }
  if (now - target.timestamp > DELETE_WINDOW_MS) {
    throw new OperationError(400, "message too old to delete for everyone");
  }
}

export function assertEditable(target: MessageRef, now: number): void {
  if (!target.fromMe) throw new OperationError(400, "only your own messages can be edited");
  if (now - target.timestamp > EDIT_WINDOW_MS) throw new OperationError(400, "message too old to edit");
}

/** Reactions have their own operation (`react`); `unknown` is what we receive, never what we send. */
export function assertSendable(content: OutgoingContent): void {
  if (content.type === "reaction") throw new OperationError(400, "send reactions with the react operation");
  if (content.type === "unknown") throw new OperationError(400, "unknown content cannot be sent");
}
