import { Hono } from "hono";
import type { z } from "zod";
import type { InboxEntrySchema } from "../../control/issues";
import { apiCompanyPath, companyNav, loadCompany, PriorityBadge } from "../ui/board-shared";
import { ActionButton, EmptyState, LiveRegion, StatusBadge, Time } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { redirectWithFlash, render, safeLocalPath } from "../ui/render";
import type { BoardIssue } from "./board-card";
import { BOARD_LIMIT } from "./board-filters";

/**
 * "Mine": the spec's Mine inbox for people. On a company's Issues tab (`/companies/:id/issues/mine`),
 * the issues assigned to the viewer there; in the header (`/mine`), every issue of theirs in every
 * company (created, assigned or commented on). Each says whether someone else commented since the
 * viewer last touched it (created, commented, or marked it read) and when, and offers Mark read.
 */
export const minePage = new Hono<DashboardEnv>();

type InboxEntry = z.infer<typeof InboxEntrySchema>;
/** An inbox entry, with the issue's priority when the page read the issue itself. */
type MineRow = InboxEntry & { priority?: string };

const INBOX_PATH = `/api/agents/me/inbox/mine?limit=${BOARD_LIMIT}`;

/** The Board / Mine switch above a company's issues: links, the current one marked. */
export function IssueViews({ companyId, current }: { companyId: string; current: "board" | "mine" }) {
  const views = [
    { view: "board", href: `/companies/${companyId}/issues`, label: "Board" },
    { view: "mine", href: `/companies/${companyId}/issues/mine`, label: "Mine" },
  ] as const;
  return (
    <nav class="subnav views" aria-label="Issue views">
      <ul>
        {views.map((item) => (
          <li>
            <a href={item.href} aria-current={item.view === current ? "page" : undefined}>
              {item.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** The issue as the inbox would show it; assigned issues the inbox no longer lists are read. */
function rowOf(issue: BoardIssue, entry: InboxEntry | undefined): MineRow {
  return {
    id: issue.id,
    identifier: issue.identifier,
    title: issue.title,
    status: issue.status,
    priority: issue.priority,
    myLastTouchAt: entry?.myLastTouchAt ?? null,
    lastExternalCommentAt: entry?.lastExternalCommentAt ?? null,
    assignedToMeAt: entry?.assignedToMeAt ?? null,
    isUnreadForMe: entry?.isUnreadForMe ?? false,
  };
}

/**
 * Assigned issues in the inbox's order (most recently active first); a finished one drops out when the
 * inbox drops it (7 days after it finished), as on the spec's Mine tab.
 */
export function assignedRows(assigned: readonly BoardIssue[], inbox: readonly InboxEntry[]): MineRow[] {
  const entries = new Map(inbox.map((entry) => [entry.id, entry]));
  const finished = (issue: BoardIssue) => issue.status === "done" || issue.status === "cancelled";
  return assigned
    .filter((issue) => entries.has(issue.id) || !finished(issue))
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
    .map((issue) => rowOf(issue, entries.get(issue.id)));
}

function MineItem({ row, csrf, back }: { row: MineRow; csrf: string; back: string }) {
  return (
    <li class={row.isUnreadForMe ? "card unread" : "card"} data-mine-issue={row.id}>
      <p>
        {row.isUnreadForMe && <span class="badge warn">Unread</span>}{" "}
        <a href={`/issues/${row.id}`}>
          {row.identifier} {row.title}
        </a>
      </p>
      <p class="muted">
        <StatusBadge status={row.status} /> {row.priority && <PriorityBadge priority={row.priority} />}{" "}
        {row.myLastTouchAt ? (
          <>
            You last touched it <Time value={row.myLastTouchAt} />
          </>
        ) : (
          "Not opened by you yet"
        )}
        {row.lastExternalCommentAt && (
          <>
            {" "}
            · last comment by someone else <Time value={row.lastExternalCommentAt} />
          </>
        )}
        {row.assignedToMeAt && (
          <>
            {" "}
            · assigned to you <Time value={row.assignedToMeAt} />
          </>
        )}
      </p>
      {row.isUnreadForMe && (
        <ActionButton
          action={`/issues/${row.id}/read`}
          csrf={csrf}
          label="Mark read"
          name={`Mark read: ${row.identifier}`}
          variant="secondary"
          hidden={{ back }}
        />
      )}
    </li>
  );
}

function MineList(props: { rows: readonly MineRow[]; csrf: string; back: string; empty: string }) {
  if (props.rows.length === 0) return <EmptyState>{props.empty}</EmptyState>;
  const unread = props.rows.filter((row) => row.isUnreadForMe).length;
  return (
    <>
      <p class="muted">
        {props.rows.length} {props.rows.length === 1 ? "issue" : "issues"}, {unread} unread
      </p>
      <ol class="comments mine">
        {props.rows.map((row) => (
          <MineItem row={row} csrf={props.csrf} back={props.back} />
        ))}
      </ol>
    </>
  );
}

minePage.get("/companies/:companyId/issues/mine", async (c) => {
  const company = await loadCompany(c, c.req.param("companyId"));
  const assignedPath = `${apiCompanyPath(company.id)}/issues?${new URLSearchParams({
    assigneeUserId: c.var.viewer.id,
    limit: String(BOARD_LIMIT),
  })}`;
  const [assigned, inbox] = await Promise.all([
    c.var.api.get<BoardIssue[]>(assignedPath),
    c.var.api.get<InboxEntry[]>(INBOX_PATH),
  ]);
  const back = `/companies/${company.id}/issues/mine`;
  return render(c, {
    title: `${company.name}: my issues`,
    section: "companies",
    company: companyNav(company, "issues"),
    children: (
      <>
        <IssueViews companyId={company.id} current="mine" />
        <p class="muted">
          Issues assigned to you here. Unread: someone else commented since you last created, commented on or
          read it.
        </p>
        <LiveRegion id="issue-mine" feed={`${apiCompanyPath(company.id)}/events`}>
          <MineList
            rows={assignedRows(assigned, inbox)}
            csrf={c.var.csrf}
            back={back}
            empty="Nothing is assigned to you in this company."
          />
        </LiveRegion>
      </>
    ),
  });
});

minePage.get("/mine", async (c) => {
  const inbox = await c.var.api.get<InboxEntry[]>(INBOX_PATH);
  return render(c, {
    title: "Mine",
    section: "mine",
    children: (
      <>
        <p class="muted">
          Your issues in every company: created by you, assigned to you or commented on by you, most recently
          active first. Unread: someone else commented since you last touched it.
        </p>
        <MineList
          rows={inbox}
          csrf={c.var.csrf}
          back="/mine"
          empty="Nothing yet: issues you create, are given or comment on are listed here."
        />
      </>
    ),
  });
});

/** Mark read (the API's read state for the Mine inbox), then back to the Mine view it was pressed on. */
minePage.post("/issues/:issueId/read", async (c) => {
  const result = await c.var.api.send(
    "POST",
    `/api/issues/${encodeURIComponent(c.req.param("issueId"))}/read`,
  );
  return redirectWithFlash(
    c,
    safeLocalPath(c.var.form.back, "/mine"),
    result.ok ? "Marked read" : result.error,
  );
});
