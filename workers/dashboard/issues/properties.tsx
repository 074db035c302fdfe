import type { Context } from "hono";
import type { z } from "zod";
import type { IssueDetailSchema } from "../../control/issues";
import { type Agent, apiCompanyPath, PriorityBadge } from "../ui/board-shared";
import { type ActionRefusal, LiveRegion, StatusBadge, Time } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { assigneeOptions, type QuickEditChoices, QuickEditForm } from "./board-card";
import { CancelButton, DeleteIssueButton, isCancellable, issueFeedPath } from "./model-views";

// ---------------------------------------------------------------------------------------------
// The issue page's side column: the properties (the one place its status, assignee, priority, due
// date and labels are changed, or read by a viewer) and the Actions menu holding Cancel and Delete.
// ---------------------------------------------------------------------------------------------

type PropertiesIssue = z.infer<typeof IssueDetailSchema>;

/** The company's people and labels: choices for those who may change the issue, names for everyone. */
export interface PropertyNames {
  agents: ReadonlyMap<string, string>;
  people: ReadonlyArray<{ userId: string; name: string }>;
  labels: ReadonlyArray<{ id: string; name: string }>;
}

export async function propertyNamesOf(
  c: Context<DashboardEnv>,
  companyId: string,
  agents: readonly Agent[],
): Promise<PropertyNames> {
  const base = apiCompanyPath(companyId);
  const [members, labels] = await Promise.all([
    c.var.api.get<{ members: Array<{ userId: string; name: string }> }>(`${base}/members`),
    c.var.api.get<Array<{ id: string; name: string }>>(`${base}/labels`),
  ]);
  return { agents: new Map(agents.map((a) => [a.id, a.name])), people: members.members, labels };
}

export const quickEditChoicesOf = (
  agents: readonly Agent[],
  names: PropertyNames,
  csrf: string,
): QuickEditChoices => ({
  csrf,
  assignees: assigneeOptions(agents, names.people, "Unassigned"),
  labels: names.labels,
});

function assigneeName(issue: PropertiesIssue, names: PropertyNames): string {
  if (issue.assigneeAgentId) return names.agents.get(issue.assigneeAgentId) ?? "An agent";
  if (issue.assigneeUserId)
    return names.people.find((person) => person.userId === issue.assigneeUserId)?.name ?? "A former member";
  return "Unassigned";
}

/** What a viewer reads where members find the form. */
function ReadOnlyProperties({ issue, names }: { issue: PropertiesIssue; names: PropertyNames }) {
  const labels = names.labels.filter((label) => issue.labelIds.includes(label.id)).map((label) => label.name);
  return (
    <>
      <dt>Status</dt>
      <dd>
        <StatusBadge status={issue.status} />
      </dd>
      <dt>Assignee</dt>
      <dd>{assigneeName(issue, names)}</dd>
      <dt>Priority</dt>
      <dd>
        <PriorityBadge priority={issue.priority} />
      </dd>
      <dt>Due date</dt>
      <dd>{issue.dueDate ?? "None"}</dd>
      <dt>Labels</dt>
      <dd>{labels.length > 0 ? labels.join(", ") : "None"}</dd>
    </>
  );
}

/**
 * Live like the timeline: the script leaves it alone while someone is choosing or typing in it, so a
 * form half filled in is never swapped out, and otherwise it shows the issue as it is now.
 */
export function PropertiesPanel(props: {
  issue: PropertiesIssue;
  names: PropertyNames;
  choices: QuickEditChoices | undefined;
  note: string | undefined;
}) {
  const { issue, names, choices } = props;
  return (
    <section class="panel" aria-labelledby="issue-properties">
      <h2 id="issue-properties">Properties</h2>
      <LiveRegion id="issue-properties-live" feed={issueFeedPath(issue.id)}>
        {choices && <QuickEditForm issue={issue} choices={choices} back="issue" note={props.note ?? ""} />}
        <dl class="facts">
          {!choices && <ReadOnlyProperties issue={issue} names={names} />}
          <dt>Project</dt>
          <dd>{issue.project?.name ?? "None"}</dd>
          <dt>Started</dt>
          <dd>
            <Time value={issue.startedAt} />
          </dd>
          <dt>Completed</dt>
          <dd>
            <Time value={issue.completedAt} />
          </dd>
        </dl>
      </LiveRegion>
    </section>
  );
}

/** Cancel and Delete, out of the way of a stray click; open when a refused Delete explains itself. */
export function ActionsMenu(props: {
  issue: { id: string; identifier: string; status: string };
  csrf: string;
  refusal: ActionRefusal | undefined;
}) {
  const { issue, csrf } = props;
  return (
    <details class="card-menu issue-actions" open={props.refusal !== undefined}>
      <summary aria-label={`Actions for ${issue.identifier}`}>Actions</summary>
      <div class="actions">
        {isCancellable(issue.status) && <CancelButton issue={issue} csrf={csrf} />}
        <DeleteIssueButton issue={issue} csrf={csrf} refusal={props.refusal} />
      </div>
    </details>
  );
}
