import type { z } from "zod";
import type { IssueListItemSchema } from "../../control/issues";
import { ISSUE_PRIORITIES, ISSUE_STATUSES } from "../../db/schema";
import { initialsOf, PriorityBadge } from "../ui/board-shared";
import type { Option } from "../ui/components";
import { CancelButton, isCancellable } from "./model-views";

/** An issue as the board lists it: with its label ids. */
export type BoardIssue = z.infer<typeof IssueListItemSchema>;

/** Names the board shows instead of ids: agents, people (company members) and labels. */
export interface BoardNames {
  agents: ReadonlyMap<string, string>;
  people: ReadonlyMap<string, string>;
  labels: ReadonlyMap<string, string>;
}

/** What a card needs to offer quick edit: the viewer's form token and the choices. */
export interface QuickEditChoices {
  csrf: string;
  assignees: readonly Option[];
  labels: ReadonlyArray<{ id: string; name: string }>;
}

/** Agents and people in one list, as `agent:<id>` / `user:<id>` (one assignee at a time). */
export const assigneeOptions = (
  agents: ReadonlyArray<{ id: string; name: string; status: string }>,
  members: ReadonlyArray<{ userId: string; name: string }>,
  none: string,
): Option[] => [
  { value: "", label: none },
  ...agents
    .filter((agent) => agent.status !== "terminated")
    .map((agent) => ({ value: `agent:${agent.id}`, label: `${agent.name} (agent)` })),
  ...members.map((member) => ({ value: `user:${member.userId}`, label: member.name })),
];

export const statusLabel = (status: string) => status.replace(/_/g, " ");

/** `agent:<id>`, `user:<id>` or "" (nobody): one select for both kinds of assignee. */
export const assigneeValue = (issue: Pick<BoardIssue, "assigneeAgentId" | "assigneeUserId">) =>
  issue.assigneeAgentId
    ? `agent:${issue.assigneeAgentId}`
    : issue.assigneeUserId
      ? `user:${issue.assigneeUserId}`
      : "";

function assigneeName(issue: BoardIssue, names: BoardNames): string {
  if (issue.assigneeAgentId) return names.agents.get(issue.assigneeAgentId) ?? "An agent";
  if (issue.assigneeUserId) return names.people.get(issue.assigneeUserId) ?? "A former member";
  return "Unassigned";
}

/** Today as the API's due dates are written (UTC calendar day). */
export const todayUtc = (now = Date.now()) => new Date(now).toISOString().slice(0, 10);

function DueDate({ issue, today }: { issue: BoardIssue; today: string }) {
  if (!issue.dueDate) return null;
  const open = issue.status !== "done" && issue.status !== "cancelled";
  const overdue = open && issue.dueDate < today;
  return (
    <span class={overdue ? "due overdue" : "due"}>
      {overdue ? "Overdue: " : "Due "}
      <time datetime={issue.dueDate}>{issue.dueDate}</time>
    </span>
  );
}

function Labels({ issue, names }: { issue: BoardIssue; names: BoardNames }) {
  if (issue.labelIds.length === 0) return null;
  return (
    <ul class="chips" aria-label="Labels">
      {issue.labelIds.map((id) => (
        <li class="chip">{names.labels.get(id) ?? "label"}</li>
      ))}
    </ul>
  );
}

function Select(props: {
  id: string;
  name: string;
  label: string;
  value: string;
  options: readonly Option[];
}) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} name={props.name}>
        {props.options.map((option) => (
          <option value={option.value} selected={option.value === props.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * The card's Edit menu: status, assignee, priority, due date and labels in one small form that posts
 * to the dashboard (it works without script; with it, the board's script sends it and shows a refusal
 * in place), and Cancel, moved here from the card's face.
 */
function QuickEdit({ issue, choices }: { issue: BoardIssue; choices: QuickEditChoices }) {
  return (
    <details class="card-menu">
      <summary aria-label={`Edit ${issue.identifier}`}>Edit</summary>
      <QuickEditForm issue={issue} choices={choices} back="board" />
      {isCancellable(issue.status) && <CancelButton issue={issue} csrf={choices.csrf} back="board" />}
    </details>
  );
}

/**
 * The Edit form itself: on a card's menu (`back` board) and in the issue page's properties panel, which
 * adds a note (`note`: what was typed before a refusal) sent as a comment with the change.
 */
export function QuickEditForm(props: {
  issue: BoardIssue;
  choices: QuickEditChoices;
  back: "board" | "issue";
  note?: string;
}) {
  const { issue, choices } = props;
  const id = (field: string) => `qe-${props.back}-${issue.id}-${field}`;
  return (
    <form method="post" action={`/issues/${issue.id}/quick-edit`} class="quick-edit" data-quick-edit>
      <input type="hidden" name="_csrf" value={choices.csrf} />
      <input type="hidden" name="companyId" value={issue.companyId} />
      <input type="hidden" name="back" value={props.back} />
      <Select
        id={id("status")}
        name="status"
        label="Status"
        value={issue.status}
        options={ISSUE_STATUSES.map((status) => ({ value: status, label: statusLabel(status) }))}
      />
      <Select
        id={id("assignee")}
        name="assignee"
        label="Assignee"
        value={assigneeValue(issue)}
        options={choices.assignees}
      />
      <Select
        id={id("priority")}
        name="priority"
        label="Priority"
        value={issue.priority}
        options={ISSUE_PRIORITIES.map((priority) => ({ value: priority, label: priority }))}
      />
      <div class="field">
        <label for={id("due")}>Due date</label>
        <input id={id("due")} name="dueDate" type="date" value={issue.dueDate ?? ""} />
      </div>
      {choices.labels.length > 0 && (
        <fieldset>
          <legend>Labels</legend>
          <input type="hidden" name="labelsShown" value="1" />
          {choices.labels.map((label) => (
            <label class="check">
              <input
                type="checkbox"
                name={`label:${label.id}`}
                value="1"
                checked={issue.labelIds.includes(label.id)}
              />{" "}
              {label.name}
            </label>
          ))}
        </fieldset>
      )}
      {props.note !== undefined && (
        <div class="field">
          <label for={id("note")}>Note with the change (optional)</label>
          <textarea id={id("note")} name="comment" rows={2} aria-describedby={id("note-hint")}>
            {props.note}
          </textarea>
          <p class="hint" id={id("note-hint")}>
            Posted as a comment. Marking blocked? Say what it waits for, unless a blocker, approval or
            question already does.
          </p>
        </div>
      )}
      <p class="field-error" role="alert" data-quick-edit-error hidden />
      <p class="muted" role="status" data-quick-edit-done hidden />
      <button type="submit">Save</button>
    </form>
  );
}

/**
 * A card: identifier, title, priority, assignee (with initials), labels and due date. For people who
 * may change issues (`choices` given) it is draggable to another column and has the Edit menu.
 */
export function IssueCard(props: {
  issue: BoardIssue;
  names: BoardNames;
  today: string;
  choices?: QuickEditChoices;
}) {
  const { issue, names, choices } = props;
  const assignee = assigneeName(issue, names);
  const assigned = Boolean(issue.assigneeAgentId || issue.assigneeUserId);
  return (
    <article
      class="card"
      id={`card-${issue.id}`}
      data-issue-id={issue.id}
      data-status={issue.status}
      draggable={choices ? "true" : undefined}
      tabindex={choices ? 0 : undefined}
      aria-label={`${issue.identifier}: ${issue.title}`}
    >
      <p class="muted">{issue.identifier}</p>
      <a href={`/issues/${issue.id}`}>{issue.title}</a>
      <p>
        <PriorityBadge priority={issue.priority} />{" "}
        {assigned && (
          <span class="avatar" aria-hidden="true">
            {initialsOf(assignee)}
          </span>
        )}{" "}
        <span class="muted">{assignee}</span>
      </p>
      <Labels issue={issue} names={names} />
      <DueDate issue={issue} today={props.today} />
      <p class="field-error" role="alert" data-move-error hidden />
      {choices && <QuickEdit issue={issue} choices={choices} />}
    </article>
  );
}
