import type { SessionContext } from "./context";

/**
 * What a person set up on a session (scheduled messages, auto-reply rules) runs on that person's
 * access. When a share is revoked or lowered to viewer, the Worker tells the object (`access.ended`,
 * durable-objects/session/access-ended.ts) and their pending work stops at once, with the reason kept
 * for the owner to read. Because a share can also end by other paths (the user's e-mail changes, the
 * user is deleted, a SUPERADMIN is demoted), every send re-checks its creator's access in D1 first.
 */

/** The reason recorded when a scheduled send finds its creator without access (whatever ended it). */
export const CREATOR_WITHOUT_ACCESS =
  "cancelled: the person who set this up no longer has operator access to this session";

/** The reason recorded on an auto-reply that found its creator without access. */
export const CREATOR_WITHOUT_ACCESS_RULE =
  "disabled: the person who set this up no longer has operator access to this session";

/**
 * `created_by IN (?, …)`: the rows one of `userIds` set up (whose work stops when their access ends).
 * The ids are bound after the statement's other values.
 */
export const createdByOneOf = (userIds: readonly string[]): string =>
  `created_by IN (${userIds.map(() => "?").join(", ")})`;

/** Owner and SUPERADMIN may do everything; anyone else needs an operator share under their e-mail. */
const OPERATES = `SELECT 1 AS yes FROM users u JOIN sessions s ON s.id = ?1
  WHERE u.id = ?2 AND (u.role = 'SUPERADMIN' OR s.user_id = u.id OR EXISTS (
    SELECT 1 FROM session_access a WHERE a.session_id = s.id AND a.email = u.email AND a.role = 'operator'))`;

/**
 * Whether `userId` may still operate this session. Rows from before creators were recorded (null)
 * run as before. The owner is known from the config copy, so the owner's own rules never wait on D1.
 */
export async function mayStillOperate(ctx: SessionContext, userId: string | null): Promise<boolean> {
  if (userId === null) return true;
  const { ownerId } = await ctx.config();
  if (ownerId !== undefined && ownerId === userId) return true;
  const row = await ctx.env.DB.prepare(OPERATES).bind(ctx.sessionId, userId).first();
  return row !== null;
}
