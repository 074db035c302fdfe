import {
  type AccountLimits,
  AccountLimitsSchema,
  LID_JID,
  PERSON_JID,
} from "../../../bridge/src/protocol/messaging";
import type { SessionContext } from "../context";

/**
 * WhatsApp's limits on the account (the reach-out timelock, the new-chat message cap) as it last
 * announced them. They are shown on the session, sent as `account.limits` webhooks, and a send that
 * WhatsApp would refuse under them — a first message to someone who never wrote to the account — is
 * refused here with the reason instead of failing silently later (WhatsApp's own clients disable the
 * compose bar; retrying counts as reaching out again and deepens the restriction).
 */
export interface SessionLimits {
  reachoutTimelock: NonNullable<AccountLimits["reachoutTimelock"]> | null;
  newChatCap: NonNullable<AccountLimits["newChatCap"]> | null;
}

const PARTS = ["reachoutTimelock", "newChatCap"] as const;

export function readLimits(sql: SqlStorage): SessionLimits {
  const stored: Record<string, unknown> = {};
  for (const row of sql.exec<{ part: string; value: string }>("SELECT part, value FROM account_limits")) {
    stored[row.part] = JSON.parse(row.value);
  }
  const parsed = AccountLimitsSchema.safeParse(stored);
  const limits = parsed.success ? parsed.data : {};
  return { reachoutTimelock: limits.reachoutTimelock ?? null, newChatCap: limits.newChatCap ?? null };
}

/** Stores what WhatsApp announced (only the parts it spoke of) and tells the webhooks. */
export function applyLimitsEvent(ctx: SessionContext, announced: AccountLimits): void {
  for (const part of PARTS) {
    const value = announced[part];
    if (value === undefined) continue;
    ctx.sql.exec(
      "INSERT INTO account_limits (part, value) VALUES (?, ?) ON CONFLICT (part) DO UPDATE SET value = excluded.value",
      part,
      JSON.stringify(value),
    );
  }
  ctx.emit("account.limits", readLimits(ctx.sql));
}

const iso = (ms: number | null) => (ms === null ? "further notice" : new Date(ms).toISOString());

/** Why WhatsApp would refuse a message to `to` now, or null: only first messages to a person are limited. */
export function newChatRefusal(sql: SqlStorage, to: string, now: number): string | null {
  if (!PERSON_JID.test(to) && !LID_JID.test(to)) return null;
  const { reachoutTimelock: lock, newChatCap: cap } = readLimits(sql);
  const locked = lock?.active === true && (lock.until === null || lock.until > now);
  const capped = cap?.status === "CAPPED" && (cap.cycleEndsAt === null || cap.cycleEndsAt > now);
  if ((!locked && !capped) || hasWrittenToUs(sql, to)) return null;
  if (locked) {
    return (
      `WhatsApp restricts this account from starting new chats until ${iso(lock?.until ?? null)} ` +
      `(reach-out timelock${lock?.enforcementType ? `, ${lock.enforcementType}` : ""}): ${to} has never written to it`
    );
  }
  return (
    `WhatsApp's new-chat message cap is reached (${cap?.used ?? "?"} of ${cap?.total ?? "?"}) until ` +
    `${iso(cap?.cycleEndsAt ?? null)}: ${to} has never written to this account`
  );
}

function hasWrittenToUs(sql: SqlStorage, chat: string): boolean {
  return sql.exec("SELECT 1 FROM messages WHERE chat = ? AND from_me = 0 LIMIT 1", chat).toArray().length > 0;
}
