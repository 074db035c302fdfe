/**
 * What the dashboard's live sockets carry. A feed (one per issue, in its IssueDO; one per company, in
 * its CompanyFeed) numbers its events 1, 2, 3… so a client that reconnects asks for what it missed
 * with `?since=<last seq>`.
 */

/** Something changed that a page showing this issue (or its company's board) should re-read. */
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
  | {
      kind: "run.started" | "run.ended" | "run.log";
      companyId: string;
      issueId: string;
      runId: string;
      status?: string;
    };

export type LiveChangeKind = LiveChange["kind"];

/** Frames a live socket sends; the client sends only `ping` (answered `pong` without waking the object). */
export type LiveFrame =
  /** First on every socket: the feed's newest sequence number now (0 for a feed with no event yet). */
  | { type: "hello"; seq: number }
  /** The asked-for `since` is older than what the feed keeps (or newer than it has): re-read everything. */
  | { type: "reset"; seq: number }
  | ({ type: "event"; seq: number; at: number } & LiveChange);

/** The board shows issues only: comments, documents and runs stay on the issue's own feed. */
export const isBoardChange = (change: LiveChange): boolean => change.kind.startsWith("issue.");
