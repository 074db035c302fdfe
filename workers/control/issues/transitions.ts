import type { IssueStatus } from "../../db/schema";

/**
 * The spec's transition table for updates (PATCH), exactly. `todo → in_progress` is not here: it
 * happens only through checkout, which claims and starts in one step. `cancelled` is reachable
 * from every non-terminal state, subject to who may cancel (see update.ts).
 */
const UPDATE_TRANSITIONS: Readonly<Record<IssueStatus, readonly IssueStatus[]>> = {
  backlog: ["todo"],
  todo: [],
  in_progress: ["in_review", "blocked", "done"],
  in_review: ["done", "in_progress"],
  blocked: ["todo", "in_progress"],
  done: [],
  cancelled: [],
};

export const TERMINAL_STATUSES: readonly IssueStatus[] = ["done", "cancelled"];

export const isTerminal = (status: IssueStatus): boolean => TERMINAL_STATUSES.includes(status);

/** Whether PATCH may move an issue from `from` to `to` (a no-op "move" to the same status is allowed). */
export function isAllowedUpdateTransition(from: IssueStatus, to: IssueStatus): boolean {
  if (from === to) return true;
  if (to === "cancelled") return !isTerminal(from);
  return UPDATE_TRANSITIONS[from].includes(to);
}

/** Every status an update may move `from` to, for the 422 body. */
export function allowedUpdateTargets(from: IssueStatus): IssueStatus[] {
  return isTerminal(from) ? [] : [...UPDATE_TRANSITIONS[from], "cancelled"];
}

/** Timestamps the move sets: started_at on entering in_progress, completed_at on done. */
export function transitionTimestamps(
  from: IssueStatus,
  to: IssueStatus,
  now: number,
): { startedAt?: number; completedAt?: number; cancelledAt?: number } {
  if (from === to) return {};
  if (to === "in_progress") return { startedAt: now };
  if (to === "done") return { completedAt: now };
  if (to === "cancelled") return { cancelledAt: now };
  return {};
}
