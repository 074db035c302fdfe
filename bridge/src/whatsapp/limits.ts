/**
 * WhatsApp's limits on an account that reaches out too much, from Baileys' events to the seam's: the
 * reach-out timelock (`connection.update` `reachoutTimeLock`, announced by a `mex` notification or
 * fetched after a 463) and the new-chat message cap (`message-capping.update`). Peers drop both, so an
 * operator learns of a restriction only from sends that silently fail.
 */
import type { BaileysEventMap } from "@whiskeysockets/baileys";
import type { AccountLimits, NetworkEvent } from "../protocol/messaging.ts";

const REACHOUT_TIMELOCKED = "463";

const epochMs = (seconds: string | undefined): number | null => {
  const parsed = seconds ? Number.parseInt(seconds, 10) : Number.NaN;
  return Number.isFinite(parsed) && parsed > 0 ? parsed * 1000 : null;
};

const count = (value: number | undefined): number | null =>
  typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : null;

export function limitEvents(events: Partial<BaileysEventMap>): NetworkEvent[] {
  const limits: AccountLimits = {};
  const lock = events["connection.update"]?.reachoutTimeLock;
  if (lock) {
    limits.reachoutTimelock = {
      active: lock.isActive === true,
      until: lock.isActive && lock.timeEnforcementEnds ? lock.timeEnforcementEnds.getTime() : null,
      enforcementType: lock.isActive ? (lock.enforcementType?.slice(0, 128) ?? null) : null,
    };
  }
  const cap = events["message-capping.update"];
  if (cap) {
    limits.newChatCap = {
      status: (cap.capping_status ?? "NONE").slice(0, 32),
      used: count(cap.used_quota),
      total: count(cap.total_quota),
      cycleEndsAt: epochMs(cap.cycle_end_timestamp),
    };
  }
  return limits.reachoutTimelock || limits.newChatCap ? [{ kind: "account.limits", limits }] : [];
}

/** Why WhatsApp refused a sent message, from the error code Baileys keeps (`messageStubParameters`). */
export function refusalReason(parameters: readonly unknown[] | null | undefined): string | undefined {
  const code = parameters?.[0];
  if (typeof code !== "string" || code === "") return undefined;
  if (code === REACHOUT_TIMELOCKED) {
    return "WhatsApp refused it: this account may not start new chats now (reach-out timelock, 463)";
  }
  return `WhatsApp refused it (error ${code.slice(0, 16)})`;
}
