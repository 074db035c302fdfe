import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { GOAL_LEVELS, GOAL_STATUSES, PROJECT_STATUSES } from "../../db/schema";
import { agentOptions, loadProjects, type Project } from "../issues/board-page";
import {
  ActionAlert,
  type Agent,
  agentNamesOf,
  apiCompanyPath,
  type BoardContext,
  type Company,
  companyNav,
  failedForm,
  idOrNull,
  loadAgents,
  loadCompany,
  optionalText,
} from "../ui/board-shared";
import {
  type ActionRefusal,
  blankForm,
  DataTable,
  DeleteButton,
  EmptyState,
  Field,
  Form,
  type FormState,
  type Option,
  SelectField,
  StatusBadge,
  TextAreaField,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { loadMyRole, mayChange, READ_ONLY_NOTE } from "../ui/member-shared";
import { failureStatus, redirectWithFlash, render } from "../ui/render";

// ---------------------------------------------------------------------------------------------
// GET /companies/:id/projects: the projects and the goal tree; POST …/projects and …/goals.
// ---------------------------------------------------------------------------------------------

/** GET /companies/{id}/goals (control/projects/goals.ts GoalSchema). */
interface Goal {
  id: string;
  title: string;
  description: string | null;
  level: (typeof GOAL_LEVELS)[number];
  status: (typeof GOAL_STATUSES)[number];
  parentId: string | null;
  ownerAgentId: string | null;
}

type Names = ReadonlyMap<string, string>;

/** What the Delete buttons need: the CSRF token (null for a viewer: no buttons) and a refusal to show. */
interface Deleting {
  csrf: string | null;
  refusal: ActionRefusal | undefined;
}

/** A project's or goal's Delete, for members; none for a viewer. */
function DeleteEntry(
  props: Deleting & { kind: "project" | "goal"; id: string; title: string; confirm: string },
) {
  if (props.csrf === null) return null;
  return (
    <DeleteButton
      action={`/${props.kind}s/${props.id}/delete`}
      csrf={props.csrf}
      what={`${props.kind} ${props.title}`}
      id={props.id}
      confirm={props.confirm}
      refusal={props.refusal}
    />
  );
}

export const projectPages = new Hono<DashboardEnv>();

const PROJECT_FIELDS = ["name", "description", "status", "goalId", "leadAgentId"] as const;
/** The goal form shares a page with the project form, so its description and status are renamed. */
const GOAL_FIELDS = ["title", "goalDescription", "level", "goalStatus", "parentId", "ownerAgentId"] as const;
const GOAL_RENAMES = { description: "goalDescription", status: "goalStatus" };

const optionsOf = (values: readonly string[], first?: Option): Option[] => [
  ...(first ? [first] : []),
  ...values.map((value) => ({ value, label: value })),
];

const goalOptions = (goals: readonly Goal[], none: string): Option[] => [
  { value: "", label: none },
  ...goals.map((goal) => ({ value: goal.id, label: `${goal.title} (${goal.level})` })),
];

function GoalBranch({
  goal,
  children,
  owners,
  deleting,
}: {
  goal: Goal;
  children: Map<string, Goal[]>;
  owners: Names;
  deleting: Deleting;
}) {
  const below = children.get(goal.id) ?? [];
  return (
    <li>
      <div class="node">
        <strong>{goal.title}</strong>
        <span>{goal.level}</span>
        <StatusBadge status={goal.status} />
        {goal.ownerAgentId && <span class="muted">owner {owners.get(goal.ownerAgentId) ?? "an agent"}</span>}
        <DeleteEntry
          {...deleting}
          kind="goal"
          id={goal.id}
          title={goal.title}
          confirm={`Delete the goal ${goal.title}? Its sub-goals move up to its parent; projects and issues keep existing without it.`}
        />
      </div>
      {below.length > 0 && (
        <ul>
          {below.map((child) => (
            <GoalBranch goal={child} children={children} owners={owners} deleting={deleting} />
          ))}
        </ul>
      )}
    </li>
  );
}

function GoalTree({ goals, owners, deleting }: { goals: Goal[]; owners: Names; deleting: Deleting }) {
  if (goals.length === 0) return <EmptyState>No goals yet.</EmptyState>;
  const ids = new Set(goals.map((goal) => goal.id));
  const children = new Map<string, Goal[]>();
  for (const goal of goals) {
    if (goal.parentId && ids.has(goal.parentId))
      children.set(goal.parentId, [...(children.get(goal.parentId) ?? []), goal]);
  }
  const roots = goals.filter((goal) => !goal.parentId || !ids.has(goal.parentId));
  return (
    <ul class="tree" aria-label="Goals by parent">
      {roots.map((goal) => (
        <GoalBranch goal={goal} children={children} owners={owners} deleting={deleting} />
      ))}
    </ul>
  );
}

function ProjectsTable(props: { projects: Project[]; goals: Goal[]; leads: Names; deleting: Deleting }) {
  const { projects, goals, leads, deleting } = props;
  if (projects.length === 0) return <EmptyState>No projects yet.</EmptyState>;
  const goalTitles = new Map(goals.map((goal) => [goal.id, goal.title] as const));
  const headings = ["Project", "Status", "Goals", "Lead", "Workspace"];
  return (
    <DataTable headings={deleting.csrf === null ? headings : [...headings, "Delete"]}>
      {projects.map((project) => (
        <tr>
          <td>
            {project.name}
            {project.description && <div class="muted">{project.description}</div>}
          </td>
          <td>
            <StatusBadge status={project.status} />
          </td>
          <td>{project.goalIds.map((id) => goalTitles.get(id) ?? "—").join(", ") || "—"}</td>
          <td>{project.leadAgentId ? (leads.get(project.leadAgentId) ?? "—") : "—"}</td>
          <td>
            {project.primaryWorkspace ? (
              <code>{project.primaryWorkspace.cwd ?? project.primaryWorkspace.repoUrl}</code>
            ) : (
              "—"
            )}
          </td>
          {deleting.csrf !== null && (
            <td>
              <DeleteEntry
                {...deleting}
                kind="project"
                id={project.id}
                title={project.name}
                confirm={`Delete the project ${project.name} with its workspaces? Its issues stay, without a project.`}
              />
            </td>
          )}
        </tr>
      ))}
    </DataTable>
  );
}

interface FormProps {
  company: Company;
  agents: Agent[];
  goals: Goal[];
  csrf: string;
  form: FormState;
}

function NewProjectForm({ company, agents, goals, csrf, form }: FormProps) {
  return (
    <Form action={`/companies/${company.id}/projects`} csrf={csrf} form={form} label="New project">
      <Field form={form} name="name" label="Project name" required />
      <TextAreaField form={form} name="description" label="Description" rows={2} />
      <SelectField form={form} name="status" label="Status" options={optionsOf(PROJECT_STATUSES)} />
      <SelectField form={form} name="goalId" label="Goal" options={goalOptions(goals, "No goal")} />
      <SelectField form={form} name="leadAgentId" label="Lead" options={agentOptions(agents, "No lead")} />
      <div>
        <button type="submit">Create project</button>
      </div>
    </Form>
  );
}

function NewGoalForm({ company, agents, goals, csrf, form }: FormProps) {
  return (
    <Form action={`/companies/${company.id}/goals`} csrf={csrf} form={form} label="New goal">
      <Field form={form} name="title" label="Goal title" required />
      <TextAreaField form={form} name="goalDescription" label="Goal description" rows={2} />
      <SelectField
        form={form}
        name="parentId"
        label="Parent goal"
        options={goalOptions(goals, "None (top level)")}
      />
      <SelectField
        form={form}
        name="level"
        label="Level"
        hint="Below its parent's level. Default: company at the top, else the level just below the parent's."
        options={optionsOf(GOAL_LEVELS, { value: "", label: "Default" })}
      />
      <SelectField form={form} name="goalStatus" label="Goal status" options={optionsOf(GOAL_STATUSES)} />
      <SelectField form={form} name="ownerAgentId" label="Owner" options={agentOptions(agents, "No owner")} />
      <div>
        <button type="submit">Create goal</button>
      </div>
    </Form>
  );
}

interface ProjectsView {
  project?: FormState;
  goal?: FormState;
  /** A refused Delete: next to its button, or above the page for a 403. */
  refusal?: ActionRefusal;
  alert?: string;
  status?: ContentfulStatusCode;
}

export async function showProjects(c: BoardContext, companyId: string, view: ProjectsView = {}) {
  const company = await loadCompany(c, companyId);
  const [projects, goals, agents, role] = await Promise.all([
    loadProjects(c, company.id),
    c.var.api.get<Goal[]>(`${apiCompanyPath(company.id)}/goals`),
    loadAgents(c, company.id),
    loadMyRole(c, company.id),
  ]);
  const names = agentNamesOf(agents);
  const shared = { company, agents, goals, csrf: c.var.csrf };
  const deleting = { csrf: mayChange(role) ? c.var.csrf : null, refusal: view.refusal };
  return render(
    c,
    {
      title: `${company.name}: projects and goals`,
      section: "companies",
      company: companyNav(company, "projects"),
      children: (
        <>
          <ActionAlert message={view.alert} />
          <section aria-labelledby="projects-list">
            <h2 id="projects-list">Projects</h2>
            <ProjectsTable projects={projects} goals={goals} leads={names} deleting={deleting} />
          </section>
          <section aria-labelledby="goals-tree">
            <h2 id="goals-tree">Goals</h2>
            <GoalTree goals={goals} owners={names} deleting={deleting} />
          </section>
          {mayChange(role) ? (
            <div class="grid">
              <section class="panel" aria-labelledby="projects-new">
                <h2 id="projects-new">New project</h2>
                <NewProjectForm {...shared} form={view.project ?? blankForm({ status: "active" })} />
              </section>
              <section class="panel" aria-labelledby="goals-new">
                <h2 id="goals-new">New goal</h2>
                <NewGoalForm {...shared} form={view.goal ?? blankForm({ goalStatus: "active" })} />
              </section>
            </div>
          ) : (
            <p class="muted">{READ_ONLY_NOTE}</p>
          )}
        </>
      ),
    },
    view.status ?? 200,
  );
}

projectPages.get("/companies/:companyId/projects", (c) => showProjects(c, c.req.param("companyId")));

projectPages.post("/companies/:companyId/projects", async (c) => {
  const companyId = c.req.param("companyId");
  const values = c.var.form;
  const goalId = optionalText(values.goalId);
  const result = await c.var.api.send<Project>("POST", `${apiCompanyPath(companyId)}/projects`, {
    name: values.name ?? "",
    description: optionalText(values.description) ?? null,
    status: optionalText(values.status),
    goalIds: goalId ? [goalId] : [],
    leadAgentId: idOrNull(values.leadAgentId),
  });
  if (!result.ok) {
    const form = failedForm(values, result, PROJECT_FIELDS, { goalIds: "goalId" });
    // "goalIds must be goals of this company" names its field without the "field: " prefix.
    if (form.errors._form?.startsWith("goalIds ")) {
      form.errors.goalId = form.errors._form;
      delete form.errors._form;
    }
    return showProjects(c, companyId, { project: form, status: failureStatus(result) });
  }
  return redirectWithFlash(
    c,
    `/companies/${result.data.companyId}/projects`,
    `Project ${result.data.name} created`,
  );
});

projectPages.post("/companies/:companyId/goals", async (c) => {
  const companyId = c.req.param("companyId");
  const values = c.var.form;
  const result = await c.var.api.send<Goal & { companyId: string }>(
    "POST",
    `${apiCompanyPath(companyId)}/goals`,
    {
      title: values.title ?? "",
      description: optionalText(values.goalDescription) ?? null,
      level: optionalText(values.level),
      status: optionalText(values.goalStatus),
      parentId: idOrNull(values.parentId),
      ownerAgentId: idOrNull(values.ownerAgentId),
    },
  );
  if (!result.ok) {
    const form = failedForm(values, result, GOAL_FIELDS, GOAL_RENAMES);
    // The level rule is a 422 without a field prefix; it is about the level chosen against the parent.
    if (form.errors._form?.includes("level")) {
      form.errors.level = form.errors._form;
      delete form.errors._form;
    }
    return showProjects(c, companyId, { goal: form, status: failureStatus(result) });
  }
  return redirectWithFlash(
    c,
    `/companies/${result.data.companyId}/projects`,
    `Goal ${result.data.title} created`,
  );
});
