import type { Context } from "hono";
import type { z } from "zod";
import type { ActivitySchema } from "../../control/companies";
import type { CommentSchema } from "../../control/issues";
import { RunEntry, type runsOf } from "../runs/view";
import { Avatar, actorLabel, apiCompanyPath } from "../ui/board-shared";
import { EmptyState, StatusBadge, Time } from "../ui/components";
import type { DashboardEnv } from "../ui/env";

// ---------------------------------------------------------------------------------------------
// The issue page's one timeline: what happened to the issue (its activity log entries), what was said
// (comments) and the agent runs woken for it, oldest first, each with who and when.
// ---------------------------------------------------------------------------------------------

export type Activity = z.infer<typeof ActivitySchema>;
type Comment = z.infer<typeof CommentSchema>;
type RunWithLog = Awaited<ReturnType<typeof runsOf>>[number];
type Names = ReadonlyMap<string, string>;

/** The API's page size; an issue with more entries shows its newest this many and links to the log. */
export const ACTIVITY_SHOWN = 200;

/**
 * A comment is its own entry (its `issue.comment_added` row would say it twice); a person opening the
 * issue (`issue.read_marked`) is not something that happened to it.
 */
const UNSHOWN_ACTIONS = new Set(["issue.comment_added", "issue.read_marked"]);

/** The issue's activity log entries, oldest first, through the company's activity API. */
export async function activityOf(c: Context<DashboardEnv>, issue: { id: string; companyId: string }) {
  const query = new URLSearchParams({
    entityType: "issue",
    entityId: issue.id,
    limit: String(ACTIVITY_SHOWN),
  });
  const newestFirst = await c.var.api.get<Activity[]>(`${apiCompanyPath(issue.companyId)}/activity?${query}`);
  return { entries: newestFirst.reverse(), complete: newestFirst.length < ACTIVITY_SHOWN };
}

export type TimelineEntry =
  | { kind: "event"; at: number; activity: Activity }
  | { kind: "comment"; at: number; comment: Comment }
  | { kind: "run"; at: number; run: RunWithLog };

/** A change and the note sent with it share a timestamp: the change reads first, then what was said. */
const KIND_ORDER = { event: 0, comment: 1, run: 2 } as const;

/** Runs are placed where they began (or were queued, if they have not started). */
export function timelineOf(parts: {
  activity: readonly Activity[];
  comments: readonly Comment[];
  runs: readonly RunWithLog[];
}): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    ...parts.activity
      .filter((activity) => !UNSHOWN_ACTIONS.has(activity.action))
      .map((activity) => ({ kind: "event" as const, at: Date.parse(activity.createdAt), activity })),
    ...parts.comments.map((comment) => ({
      kind: "comment" as const,
      at: Date.parse(comment.createdAt),
      comment,
    })),
    ...parts.runs.map((run) => ({
      kind: "run" as const,
      at: Date.parse(run.run.startedAt ?? run.run.createdAt),
      run,
    })),
  ];
  return entries.sort((a, b) => a.at - b.at || KIND_ORDER[a.kind] - KIND_ORDER[b.kind]);
}

const words = (value: unknown) => (typeof value === "string" ? value.replace(/_/g, " ") : "?");

/** The fields of an `issue.updated` row as people call them. */
const FIELD_WORDS: Record<string, string> = {
  assigneeAgentId: "assignee",
  assigneeUserId: "assignee",
  labelIds: "labels",
  dueDate: "due date",
  blockedByIssueIds: "blockers",
  projectId: "project",
  goalId: "goal",
  parentId: "parent issue",
};

function changedFields(details: Record<string, unknown>): string {
  const changes = Array.isArray(details.changes) ? details.changes : [];
  const named = changes
    .filter((field): field is string => typeof field === "string" && field !== "status")
    .map((field) => FIELD_WORDS[field] ?? field.replace(/([A-Z])/g, " $1").toLowerCase());
  return [...new Set(named)].join(", ");
}

function updateSentence(details: Record<string, unknown>): string {
  const status = details.status as { from?: unknown; to?: unknown } | undefined;
  const moved = status ? `moved it from ${words(status.from)} to ${words(status.to)}` : "";
  const fields = changedFields(details);
  const changed = fields ? `changed ${fields}` : "";
  return [moved, changed].filter(Boolean).join(" and ") || "updated it";
}

/** What an activity entry did, as the rest of a sentence that starts with who did it. */
export function activitySentence(activity: Activity): string {
  const { details } = activity;
  switch (activity.action) {
    case "issue.created":
      return "created the issue";
    case "issue.updated":
      return updateSentence(details);
    case "issue.checked_out":
      return `checked it out and started work (was ${words(details.previousStatus)})`;
    case "issue.released":
      return `released it: ${words(details.previousStatus)} to ${words(details.status)}`;
    case "issue.question_asked":
      return "asked a question";
    case "issue.question_answered":
      return details.via === "whatsapp" ? "answered a question via WhatsApp" : "answered a question";
    case "issue.attachment_added":
      return `attached ${typeof details.filename === "string" ? details.filename : "a file"}`;
    case "issue.attachment_deleted":
      return `removed ${typeof details.filename === "string" ? details.filename : "a file"}`;
    case "issue.approval_linked":
      return "linked an approval";
    case "issue.approval_unlinked":
      return "unlinked an approval";
    default:
      return activity.action.replace(/^issue\./, "").replace(/[._]/g, " ");
  }
}

function EventEntry(props: { activity: Activity; viewerId: string; names: Names }) {
  const { activity } = props;
  const who = actorLabel(props.viewerId, props.names, {
    type: activity.actorType,
    id: activity.actorId,
    name: activity.actorName,
  });
  return (
    <li class="timeline-entry" data-kind="event">
      <p>
        <Avatar name={who} /> <strong>{who}</strong> {activitySentence(activity)},{" "}
        <span class="muted">
          <Time value={activity.createdAt} />
        </span>
      </p>
    </li>
  );
}

function CommentEntry(props: { comment: Comment; viewerId: string; names: Names }) {
  const { comment, viewerId, names } = props;
  const author = comment.authorAgentId
    ? actorLabel(viewerId, names, { type: "agent", id: comment.authorAgentId })
    : actorLabel(viewerId, names, { type: "user", id: comment.authorUserId, name: comment.authorName });
  return (
    <li class="timeline-entry card" data-kind="comment">
      <p class="muted">
        <Avatar name={author} /> {author}, <Time value={comment.createdAt} />
      </p>
      <div class="prose">{comment.body}</div>
    </li>
  );
}

/** One line for the run (who, how it ended, when), its details, conversation and output folded below. */
function RunTimelineEntry({ entry, names }: { entry: RunWithLog; names: Names }) {
  const { run } = entry;
  const agent = names.get(run.agentId) ?? "An agent";
  return (
    <li class="timeline-entry" data-kind="run">
      <p>
        <Avatar name={agent} /> <strong>{agent}</strong> ran <StatusBadge status={run.status} />,{" "}
        <span class="muted">
          <Time value={run.startedAt ?? run.createdAt} />
          {run.finishedAt && (
            <>
              {" to "}
              <Time value={run.finishedAt} />
            </>
          )}
        </span>{" "}
        <a href={`/runs/${run.id}`}>Run page</a>
      </p>
      {run.waitingForRunner && <p class="muted">Queued: no runner that serves this company is connected.</p>}
      <details class="run-fold">
        <summary>Details, transcript and output</summary>
        <RunEntry run={run} log={entry.log} events={entry.events} names={names} />
      </details>
    </li>
  );
}

export function Timeline(props: {
  entries: readonly TimelineEntry[];
  viewerId: string;
  names: Names;
  olderAt?: string;
}) {
  const { viewerId, names } = props;
  if (props.entries.length === 0) return <EmptyState>Nothing has happened here yet.</EmptyState>;
  return (
    <>
      {props.olderAt && (
        <p class="muted">
          Older entries are in the <a href={props.olderAt}>company's activity log</a>.
        </p>
      )}
      <ol class="timeline">
        {props.entries.map((entry) => {
          if (entry.kind === "event")
            return <EventEntry activity={entry.activity} viewerId={viewerId} names={names} />;
          if (entry.kind === "comment")
            return <CommentEntry comment={entry.comment} viewerId={viewerId} names={names} />;
          return <RunTimelineEntry entry={entry.run} names={names} />;
        })}
      </ol>
    </>
  );
}
