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
  PriorityBadge,
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
import { loadMyRole, mayChange, READ_ONLY_NOTE } from "../ui/member-shared";
import { failureStatus, redirectWithFlash, render } from "../ui/render";
import { CancelButton, isCancellable } from "./model-views";

export type Issue = z.infer<typeof IssueSchema>;
type CreatedIssue = z.infer<typeof IssueWithLabelsSchema>;
export type Project = z.infer<typeof ProjectSchema>;
type BoardContext = Context<DashboardEnv>;

export const issueBoardPage = new Hono<DashboardEnv>();

/** The API's page size cap: the board shows up to this many issues for the current filter. */
const BOARD_LIMIT = 500;
const FILTERS = ["q", "status", "assigneeAgentId", "projectId"] as const;
type Filter = Partial<Record<(typeof FILTERS)[number], string>>;
const ISSUE_FIELDS = ["title", "description", "priority", "assigneeAgentId", "projectId"] as const;

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

/** A GET form's control: ids prefixed so they never clash with the New issue form's fields. */
function FilterSelect(props: {
  name: keyof Filter;
  label: string;
  value: string | undefined;
  options: Option[];
}) {
  const id = `filter-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} name={props.name}>
        {props.options.map((option) => (
          <option value={option.value} selected={option.value === (props.value ?? "")}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}

function FilterForm(props: { company: Company; filter: Filter; agents: Agent[]; projects: Project[] }) {
  const { filter } = props;
  return (
    <form
      method="get"
      action={`/companies/${props.company.id}/issues`}
      class="row"
      aria-label="Filter issues"
    >
      <div class="field">
        <label for="filter-q">Search</label>
        <input id="filter-q" name="q" type="search" value={filter.q ?? ""} />
      </div>
      <FilterSelect
        name="status"
        label="Status"
        value={filter.status}
        options={[
          { value: "", label: "Any status" },
          ...ISSUE_STATUSES.map((status) => ({ value: status, label: status.replace(/_/g, " ") })),
        ]}
      />
      <FilterSelect
        name="assigneeAgentId"
        label="Assignee"
        value={filter.assigneeAgentId}
        options={[
          { value: "", label: "Anyone" },
          ...props.agents.map((a) => ({ value: a.id, label: a.name })),
        ]}
      />
      <FilterSelect
        name="projectId"
        label="Project"
        value={filter.projectId}
        options={projectOptions(props.projects, "Any project")}
      />
      <div>
        <button type="submit">Filter</button>
      </div>
    </form>
  );
}

/** `csrf` only for people who may change issues: they get a Cancel button on open cards. */
function IssueCard({
  issue,
  names,
  csrf,
}: {
  issue: Issue;
  names: ReadonlyMap<string, string>;
  csrf?: string;
}) {
  const assignee = issue.assigneeAgentId ? (names.get(issue.assigneeAgentId) ?? "An agent") : null;
  return (
    <article class="card">
      <p class="muted">{issue.identifier}</p>
      <a href={`/issues/${issue.id}`}>{issue.title}</a>
      <p>
        <PriorityBadge priority={issue.priority} />{" "}
        <span class="muted">{assignee ?? (issue.assigneeUserId ? "A board member" : "Unassigned")}</span>
      </p>
      {csrf && isCancellable(issue.status) && <CancelButton issue={issue} csrf={csrf} back="board" />}
    </article>
  );
}

/**
 * One column per status, in the API's order; a live region fed by the company's feed, so its only forms
 * are one-button Cancel forms (nothing typed is lost when it refreshes). It scrolls sideways when the
 * columns do not fit.
 */
function Board(props: {
  companyId: string;
  issues: Issue[];
  names: ReadonlyMap<string, string>;
  csrf?: string;
}) {
  const { issues, names } = props;
  return (
    <LiveRegion id="issue-board" feed={`${apiCompanyPath(props.companyId)}/events`} class="board">
      {ISSUE_STATUSES.map((status) => {
        const column = issues.filter((issue) => issue.status === status);
        return (
          <section aria-labelledby={`column-${status}`}>
            <h2 id={`column-${status}`}>
              {status.replace(/_/g, " ")} <span class="muted">({column.length})</span>
            </h2>
            {column.map((issue) => (
              <IssueCard issue={issue} names={names} csrf={props.csrf} />
            ))}
          </section>
        );
      })}
    </LiveRegion>
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
      <div>
        <button type="submit">Create issue</button>
      </div>
    </Form>
  );
}

function issuesQuery(filter: Filter): string {
  const params = new URLSearchParams({ limit: String(BOARD_LIMIT) });
  for (const name of FILTERS) {
    const value = filter[name]?.trim();
    if (value) params.set(name, value);
  }
  return params.toString();
}

async function showBoard(
  c: BoardContext,
  companyId: string,
  filter: Filter,
  form: FormState,
  status?: ContentfulStatusCode,
) {
  const company = await loadCompany(c, companyId);
  const base = apiCompanyPath(company.id);
  const [listed, agents, projects, role] = await Promise.all([
    c.var.api.read<Issue[]>(`${base}/issues?${issuesQuery(filter)}`),
    loadAgents(c, company.id),
    loadProjects(c, company.id),
    loadMyRole(c, company.id),
  ]);
  const names = agentNamesOf(agents);
  return render(
    c,
    {
      title: `${company.name}: issues`,
      section: "companies",
      company: companyNav(company, "issues"),
      children: (
        <>
          <FilterForm company={company} filter={filter} agents={agents} projects={projects} />
          {listed.ok ? (
            <>
              {listed.data.length === 0 && <EmptyState>No issues match.</EmptyState>}
              <Board
                companyId={company.id}
                issues={listed.data}
                names={names}
                csrf={mayChange(role) ? c.var.csrf : undefined}
              />
            </>
          ) : (
            <ActionAlert message={listed.error} />
          )}
          {mayChange(role) ? (
            <section class="panel" aria-labelledby="issues-new">
              <h2 id="issues-new">New issue</h2>
              <NewIssueForm
                company={company}
                agents={agents}
                projects={projects}
                csrf={c.var.csrf}
                form={form}
              />
            </section>
          ) : (
            <p class="muted">{READ_ONLY_NOTE}</p>
          )}
        </>
      ),
    },
    status ?? (listed.ok ? 200 : failureStatus(listed)),
  );
}

issueBoardPage.get("/companies/:companyId/issues", (c) => {
  const filter: Filter = {};
  for (const name of FILTERS) filter[name] = c.req.query(name);
  return showBoard(c, c.req.param("companyId"), filter, blankForm({ priority: "medium" }));
});

issueBoardPage.post("/companies/:companyId/issues", async (c) => {
  const companyId = c.req.param("companyId");
  const values = c.var.form;
  const result = await c.var.api.send<CreatedIssue>("POST", `${apiCompanyPath(companyId)}/issues`, {
    title: values.title ?? "",
    description: optionalText(values.description),
    priority: optionalText(values.priority),
    assigneeAgentId: idOrNull(values.assigneeAgentId),
    projectId: idOrNull(values.projectId),
  });
  if (!result.ok)
    return showBoard(c, companyId, {}, failedForm(values, result, ISSUE_FIELDS), failureStatus(result));
  return redirectWithFlash(c, `/issues/${result.data.id}`, `Issue ${result.data.identifier} created`);
});
