import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { IssueSchema, IssueWithLabelsSchema } from "../../control/issues";
import type { ProjectSchema } from "../../control/projects";
import { ISSUE_PRIORITIES, ISSUE_STATUSES } from "../../db/schema";
import {
  ActionAlert,
  type Agent,
  agentNamesOf,
  apiCompanyPath,
  type Company,
  companyNav,
  failedForm,
  idOrNull,
  loadAgents,
  loadCompany,
  optionalText,
} from "../ui/board-shared";
import {
  blankForm,
  EmptyState,
  Field,
  Form,
  type FormState,
  LiveRegion,
  type Option,
  SelectField,
  TextAreaField,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import type { Member } from "../ui/member-shared";
import { loadMyRole, mayChange, READ_ONLY_NOTE } from "../ui/member-shared";
import { failureStatus, redirectWithFlash, render } from "../ui/render";
import {
  assigneeOptions,
  type BoardIssue,
  type BoardNames,
  IssueCard,
  type QuickEditChoices,
  statusLabel,
  todayUtc,
} from "./board-card";
import { boardQuery, type Filter, FilterForm, filterOf } from "./board-filters";
import { IssueViews } from "./mine-page";

export type Issue = z.infer<typeof IssueSchema>;
type CreatedIssue = z.infer<typeof IssueWithLabelsSchema>;
export type Project = z.infer<typeof ProjectSchema>;
type BoardContext = Context<DashboardEnv>;

export const issueBoardPage = new Hono<DashboardEnv>();

const ISSUE_FIELDS = ["title", "description", "priority", "assigneeAgentId", "projectId", "dueDate"] as const;
/** Cards drawn per column; the rest are a link to that column alone (a board of thousands stays quick). */
const COLUMN_LIMIT = 50;

/** A column of the board endpoint (GET /api/companies/:id/issues/board). */
interface BoardColumn {
  status: BoardIssue["status"];
  total: number;
  totalCapped: boolean;
  issues: BoardIssue[];
}

/** Agents work can be given to; the API still decides (a pending hire answers 422 next to the field). */
export const assignableAgents = (agents: readonly Agent[]) =>
  agents.filter((agent) => agent.status !== "terminated");

export const agentOptions = (agents: readonly Agent[], none: string): Option[] => [
  { value: "", label: none },
  ...assignableAgents(agents).map((agent) => ({ value: agent.id, label: agent.name })),
];

export const projectOptions = (projects: readonly Project[], none: string): Option[] => [
  { value: "", label: none },
  ...projects.map((project) => ({ value: project.id, label: project.name })),
];

export function loadProjects(c: BoardContext, companyId: string): Promise<Project[]> {
  return c.var.api.get<Project[]>(`${apiCompanyPath(companyId)}/projects`);
}

/**
 * One column per status, in the API's order, each drawing its first COLUMN_LIMIT cards; a live region
 * fed by the company's feed. People who may change issues drag cards between columns (or, with the
 * keyboard, Alt+Arrow keys on a focused card) and edit them from the card's Edit menu; a refused move
 * is explained on the card, which stays where it was.
 */
function Board(props: {
  companyId: string;
  columns: BoardColumn[];
  names: BoardNames;
  filter: Filter;
  choices?: QuickEditChoices;
}) {
  const { names } = props;
  const today = todayUtc();
  const byStatus = new Map(props.columns.map((column) => [column.status, column]));
  return (
    <LiveRegion id="issue-board" feed={`${apiCompanyPath(props.companyId)}/events`} class="board">
      {ISSUE_STATUSES.map((status) => {
        const column = byStatus.get(status) ?? { status, total: 0, totalCapped: false, issues: [] };
        const more = column.total - column.issues.length;
        const only = new URLSearchParams({ ...cleanFilter(props.filter), status });
        const count = `${column.total.toLocaleString("en-US")}${column.totalCapped ? "+" : ""}`;
        return (
          <section aria-labelledby={`column-${status}`} data-column={status}>
            <h2 id={`column-${status}`}>
              {statusLabel(status)} <span class="muted">({count})</span>
            </h2>
            {column.issues.map((issue) => (
              <IssueCard issue={issue} names={names} today={today} choices={props.choices} />
            ))}
            {more > 0 && !props.filter.status && (
              <a class="more" href={`/companies/${props.companyId}/issues?${only}`}>
                {`${more.toLocaleString("en-US")}${column.totalCapped ? "+" : ""}`} more in{" "}
                {statusLabel(status)}
              </a>
            )}
          </section>
        );
      })}
    </LiveRegion>
  );
}

const cleanFilter = (filter: Filter): Record<string, string> =>
  Object.fromEntries(Object.entries(filter).filter((entry): entry is [string, string] => Boolean(entry[1])));

/** Every board action by keyboard, said on the page; moving and editing only to those who may change. */
const KEYS: ReadonlyArray<{ keys: string; does: string; editing?: true }> = [
  {
    keys: "Tab, Shift+Tab",
    does: "through the views (Board, Mine), the filters, then each card and its links",
  },
  { keys: "Enter", does: "on a card's title opens the issue; in Search (or on Filter) applies the filters" },
  {
    keys: "Alt+Right Arrow, Alt+Left Arrow",
    does: "on a focused card moves it to the next or previous column",
    editing: true,
  },
  {
    keys: "Enter or Space on Edit",
    does: "opens the card's Edit menu: status, assignee, priority, due date, labels, Cancel",
    editing: true,
  },
  {
    keys: "Arrow keys, Space",
    does: "in the menu change the focused choice or tick a label; Enter on Save saves it in place",
    editing: true,
  },
  { keys: "Escape", does: "closes the Edit menu without saving and goes back to its card", editing: true },
];

function KeyboardHelp({ editable }: { editable: boolean }) {
  return (
    <section class="panel keyboard-help" aria-labelledby="keyboard-help">
      <h2 id="keyboard-help">Keyboard</h2>
      <dl>
        {KEYS.filter((key) => editable || !key.editing).map((key) => (
          <>
            <dt>
              <kbd>{key.keys}</kbd>
            </dt>
            <dd>{key.does}</dd>
          </>
        ))}
      </dl>
    </section>
  );
}

function NewIssueForm(props: {
  company: Company;
  agents: Agent[];
  projects: Project[];
  csrf: string;
  form: FormState;
}) {
  const { form } = props;
  return (
    <Form action={`/companies/${props.company.id}/issues`} csrf={props.csrf} form={form} label="New issue">
      <Field form={form} name="title" label="Title" required />
      <TextAreaField form={form} name="description" label="Description" rows={4} />
      <SelectField
        form={form}
        name="priority"
        label="Priority"
        options={ISSUE_PRIORITIES.map((priority) => ({ value: priority, label: priority }))}
      />
      <SelectField
        form={form}
        name="assigneeAgentId"
        label="Assignee"
        options={agentOptions(props.agents, "Unassigned")}
      />
      <SelectField
        form={form}
        name="projectId"
        label="Project"
        options={projectOptions(props.projects, "No project")}
      />
      <Field form={form} name="dueDate" label="Due date" type="date" />
      <div>
        <button type="submit">Create issue</button>
      </div>
    </Form>
  );
}

interface BoardOptions {
  form?: FormState;
  status?: ContentfulStatusCode;
  /** A refusal to show above the board (a quick edit sent without script). */
  alert?: string;
}

type Label = { id: string; name: string };

/** Everything the board names or offers, read in parallel. */
async function boardData(c: BoardContext, companyId: string, filter: Filter) {
  const base = apiCompanyPath(companyId);
  const [listed, agents, projects, role, members, labels] = await Promise.all([
    c.var.api.read<{ columns: BoardColumn[] }>(`${base}/issues/board?${boardQuery(filter, COLUMN_LIMIT)}`),
    loadAgents(c, companyId),
    loadProjects(c, companyId),
    loadMyRole(c, companyId),
    c.var.api.get<{ members: Member[] }>(`${base}/members`),
    c.var.api.get<Label[]>(`${base}/labels`),
  ]);
  const names: BoardNames = {
    agents: agentNamesOf(agents),
    people: new Map(members.members.map((member) => [member.userId, member.name])),
    labels: new Map(labels.map((label) => [label.id, label.name])),
  };
  return { listed, agents, projects, role, members: members.members, labels, names };
}

export async function showBoard(
  c: BoardContext,
  companyId: string,
  filter: Filter,
  options: BoardOptions = {},
) {
  const company = await loadCompany(c, companyId);
  const data = await boardData(c, company.id, filter);
  const { listed, agents, projects, role } = data;
  const editable = mayChange(role);
  const choices: QuickEditChoices | undefined = editable
    ? {
        csrf: c.var.csrf,
        assignees: assigneeOptions(agents, data.members, "Unassigned"),
        labels: data.labels,
      }
    : undefined;
  return render(
    c,
    {
      title: `${company.name}: issues`,
      section: "companies",
      company: companyNav(company, "issues"),
      children: (
        <>
          <IssueViews companyId={company.id} current="board" />
          <FilterForm
            company={company}
            filter={filter}
            assignees={assigneeOptions(agents, data.members, "Anyone")}
            projects={projectOptions(projects, "Any project")}
            labels={[
              { value: "", label: "Any label" },
              ...data.labels.map((l) => ({ value: l.id, label: l.name })),
            ]}
          />
          <ActionAlert message={options.alert} />
          {listed.ok ? (
            <>
              {listed.data.columns.every((column) => column.total === 0) && (
                <EmptyState>No issues match.</EmptyState>
              )}
              <Board
                companyId={company.id}
                columns={listed.data.columns}
                names={data.names}
                filter={filter}
                choices={choices}
              />
            </>
          ) : (
            <ActionAlert message={listed.error} />
          )}
          {editable ? (
            <section class="panel" aria-labelledby="issues-new">
              <h2 id="issues-new">New issue</h2>
              <NewIssueForm
                company={company}
                agents={agents}
                projects={projects}
                csrf={c.var.csrf}
                form={options.form ?? blankForm({ priority: "medium" })}
              />
            </section>
          ) : (
            <p class="muted">{READ_ONLY_NOTE}</p>
          )}
          <KeyboardHelp editable={editable} />
        </>
      ),
    },
    options.status ?? (listed.ok ? 200 : failureStatus(listed)),
  );
}

issueBoardPage.get("/companies/:companyId/issues", (c) =>
  showBoard(
    c,
    c.req.param("companyId"),
    filterOf((name) => c.req.query(name)),
  ),
);

issueBoardPage.post("/companies/:companyId/issues", async (c) => {
  const companyId = c.req.param("companyId");
  const values = c.var.form;
  const result = await c.var.api.send<CreatedIssue>("POST", `${apiCompanyPath(companyId)}/issues`, {
    title: values.title ?? "",
    description: optionalText(values.description),
    priority: optionalText(values.priority),
    assigneeAgentId: idOrNull(values.assigneeAgentId),
    projectId: idOrNull(values.projectId),
    dueDate: idOrNull(values.dueDate),
  });
  if (!result.ok)
    return showBoard(
      c,
      companyId,
      {},
      {
        form: failedForm(values, result, ISSUE_FIELDS),
        status: failureStatus(result),
      },
    );
  return redirectWithFlash(c, `/issues/${result.data.id}`, `Issue ${result.data.identifier} created`);
});
