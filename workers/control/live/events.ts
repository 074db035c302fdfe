/**
 * What the dashboard's live sockets carry. A feed (one per issue, in its IssueDO; one per company, in
 * its CompanyFeed) numbers its events 1, 2, 3… so a client that reconnects asks for what it missed
 * with `?since=<last seq>`.
 */

/** Something changed that a page showing this issue (or its company's board, or a run) should re-read. */
export type LiveChange =
  | {
      kind: "issue.created" | "issue.updated" | "issue.deleted";
      companyId: string;
      issueId: string;
      /** The issue as the change left it, when the writer had it at hand (never for a delete). */
      status?: string;
      title?: string;
      assigneeAgentId?: string | null;
      assigneeUserId?: string | null;
    }
  | { kind: "comment.added"; companyId: string; issueId: string; commentId: string }
  | { kind: "document.changed"; companyId: string; issueId: string; key: string }
  /** A question on the issue was asked or answered. */
  | { kind: "question.changed"; companyId: string; issueId: string; questionId: string }
  /** A file was attached to the issue or removed from it. */
  | { kind: "attachment.changed"; companyId: string; issueId: string; attachmentId: string }
  /** An issue this one is blocked by changed its status (the page lists its blockers with theirs). */
  | { kind: "blocker.changed"; companyId: string; issueId: string; blockerIssueId: string; status: string }
  /**
   * Someone got a notification (a mention, an assignment): their open pages re-read the unread count.
   * Carries only the recipient's id, nothing of the notification itself, since every page of the
   * company hears it.
   */
  | { kind: "notification.created"; companyId: string; userId: string }
  | {
      kind: "run.started" | "run.ended" | "run.log";
      companyId: string;
      /** The run's issue (announced on its feed); null for a run woken for no issue (on the company's). */
      issueId: string | null;
      runId: string;
      status?: string;
    };

export type LiveChangeKind = LiveChange["kind"];

/** Frames a live socket sends; the client sends only `ping` (answered `pong` without waking the object). */
export type LiveFrame =
  /**
   * First on every socket: the feed's newest sequence number now (0 for a feed with no event yet) and
   * when that event happened (null without one), so a page drawn just before it knows to re-read.
   */
  | { type: "hello"; seq: number; at: number | null }
  /** The asked-for `since` is older than what the feed keeps (or newer than it has): re-read everything. */
  | { type: "reset"; seq: number }
  | ({ type: "event"; seq: number; at: number } & LiveChange);

/**
 * The board shows issues (and the unread count of notifications): comments, documents and runs stay
 * on the issue's own feed.
 */
export const isBoardChange = (change: LiveChange): boolean =>
  change.kind.startsWith("issue.") || change.kind === "notification.created";

/**
 * Which of a feed's events one socket receives: all of them (the issue page), the board's (issue
 * changes), or one run's (the run page, on its issue's feed or, for a run without one, its company's).
 */
export type LiveInterest = "all" | "board" | { runId: string };

export function wants(interest: LiveInterest, change: LiveChange): boolean {
  if (interest === "all") return true;
  if (interest === "board") return isBoardChange(change);
  return "runId" in change && change.runId === interest.runId;
}
