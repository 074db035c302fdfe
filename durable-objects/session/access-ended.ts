import { disableAutoRepliesBy } from "../messaging/bot/auto-replies";
import { cancelBroadcastsBy } from "../messaging/broadcasts/store";
import { type Outcome, type SessionContext, success } from "../messaging/context";
import { cancelScheduledBy } from "../messaging/scheduler/store";

/**
 * The Worker's call when a share is revoked or lowered to viewer: what those people set up on the
 * session stops now (durable-objects/messaging/access.ts has the check every send makes as well).
 */
export interface AccessEnded {
  /** The users whose access ended (everyone holding the e-mail of the removed or lowered share). */
  userIds: string[];
  /** Shown to the owner on each cancelled message and turned-off rule. */
  reason: string;
}

export interface Stopped {
  scheduledCancelled: number;
  autoRepliesDisabled: number;
  broadcastsCancelled: number;
}

export const accessApi = {
  "access.ended": (ctx: SessionContext, input: AccessEnded): Outcome<Stopped> => {
    const now = ctx.now();
    return success({
      scheduledCancelled: cancelScheduledBy(ctx.sql, input.userIds, input.reason, now),
      autoRepliesDisabled: disableAutoRepliesBy(ctx.sql, input.userIds, input.reason, now),
      broadcastsCancelled: cancelBroadcastsBy(ctx.sql, input.userIds, input.reason, now),
    });
  },
};
