import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import {
  CreateTriggerBodySchema,
  firstTick,
  type RoutineDetailSchema,
  type RoutineRunSchema,
  type RoutineSchema,
  type TriggerWithSecretSchema,
} from "../../control/routines";
import { ApiError } from "../../http/errors";
import { agentOptions, loadProjects, type Project, projectOptions } from "../issues/board-page";
import type { FieldErrors } from "../ui/api-client";
import {
  ActionAlert,
  agentNamesOf,
  apiCompanyPath,
  type Company,
  companyNav,
  failedForm,
  loadAgents,
  loadCompany,
  optionalText,
  PriorityBadge,
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
  SelectField,
  StatusBadge,
  Time,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { loadMyRole, mayChange, READ_ONLY_NOTE } from "../ui/member-shared";
import { failureStatus, redirectWithFlash, render } from "../ui/render";

type Routine = z.infer<typeof RoutineSchema>;
type RoutineDetail = z.infer<typeof RoutineDetailSchema>;
type Trigger = RoutineDetail["triggers"][number];
type RoutineRun = z.infer<typeof RoutineRunSchema>;
type CreatedTrigger = z.infer<typeof TriggerWithSecretSchema>;
type RoutineContext = Context<DashboardEnv>;
type Names = ReadonlyMap<string, string>;

export const routinePages = new Hono<DashboardEnv>();

const RECENT_RUNS = 5;
const ROUTINE_FIELDS = ["title", "assigneeAgentId", "projectId", "cronExpression", "timezone"] as const;

const routineApiPath = (routineId: string) => `/api/routines/${encodeURIComponent(routineId)}`;

function TriggerList({ triggers }: { triggers: Trigger[] }) {
  if (triggers.length === 0) return <p class="muted">No triggers: it runs only when started by hand.</p>;
  return (
    <DataTable headings={["Trigger", "Schedule", "Next run", "Last fired", "Enabled"]}>
      {triggers.map((trigger) => (
        <tr>
          <td>{trigger.label ? `${trigger.kind}: ${trigger.label}` : trigger.kind}</td>
          <td>
            {trigger.cronExpression ? (
              <>
                <code>{trigger.cronExpression}</code> ({trigger.timezone ?? "UTC"})
              </>
            ) : (
              "—"
            )}
          </td>
          <td>
            <Time value={trigger.nextRunAt} />
          </td>
          <td>
            <Time value={trigger.lastFiredAt} />
          </td>
          <td>{trigger.enabled ? "Yes" : "No"}</td>
        </tr>
      ))}
    </DataTable>
  );
}

function RunHistory({ runs }: { runs: RoutineRun[] }) {
  if (runs.length === 0) return <p class="muted">No runs yet.</p>;
  return (
    <DataTable headings={["When", "Source", "Outcome", "Issue"]}>
      {runs.map((run) => (
        <tr>
          <td>
            <Time value={run.createdAt} />
          </td>
          <td>{run.source.replace(/_/g, " ")}</td>
          <td>
            {run.status.replace(/_/g, " ")}
            {run.reason && <span class="muted"> ({run.reason})</span>}
          </td>
          <td>{run.issueId ? <a href={`/issues/${run.issueId}`}>Open the issue</a> : "—"}</td>
        </tr>
      ))}
    </DataTable>
  );
}

interface RoutineEntryData {
  routine: RoutineDetail;
  runs: RoutineRun[];
}

/** `csrf` is null for a viewer: no Run now or Delete button. */
function RoutineEntry(
  props: RoutineEntryData & {
    names: Names;
    projects: Names;
    csrf: string | null;
    refusal: ActionRefusal | undefined;
  },
) {
  const { routine } = props;
  return (
    <article class="card" aria-labelledby={`routine-${routine.id}`}>
      <h3 id={`routine-${routine.id}`}>
        {routine.title} <StatusBadge status={routine.status} />
      </h3>
      <p>
        For {props.names.get(routine.assigneeAgentId) ?? "an agent"} in{" "}
        {props.projects.get(routine.projectId) ?? "a project"} · <PriorityBadge priority={routine.priority} />{" "}
        · <span class="muted">{routine.concurrencyPolicy.replace(/_/g, " ")}</span>
      </p>
      {routine.description && <p class="prose">{routine.description}</p>}
      <h4>Triggers</h4>
      <TriggerList triggers={routine.triggers} />
      <h4>Recent runs</h4>
      <RunHistory runs={props.runs} />
      {props.csrf !== null && (
        <form method="post" action={`/routines/${routine.id}/run`} class="inline">
          <input type="hidden" name="_csrf" value={props.csrf} />
          <button type="submit" class="secondary">
            Run now <span class="sr-only">{routine.title}</span>
          </button>
        </form>
      )}{" "}
      {props.csrf !== null && (
        <DeleteButton
          action={`/routines/${routine.id}/delete`}
          csrf={props.csrf}
          what={routine.title}
          id={routine.id}
          confirm={`Delete ${routine.title} with its triggers and run history? Issues it created stay. Archiving keeps the history.`}
          refusal={props.refusal}
        />
      )}
    </article>
  );
}

function NewRoutineForm(props: {
  company: Company;
  agents: Parameters<typeof agentOptions>[0];
  projects: Project[];
  csrf: string;
  form: FormState;
}) {
  const { form } = props;
  return (
    <Form
      action={`/companies/${props.company.id}/routines`}
      csrf={props.csrf}
      form={form}
      label="New routine"
    >
      <Field form={form} name="title" label="Title" required />
      <SelectField
        form={form}
        name="assigneeAgentId"
        label="Assignee"
        options={agentOptions(props.agents, "Choose an agent")}
      />
      <SelectField
        form={form}
        name="projectId"
        label="Project"
        options={projectOptions(props.projects, "Choose a project")}
      />
      <Field
        form={form}
        name="cronExpression"
        label="Schedule (cron, optional)"
        hint="5 fields: minute hour day-of-month month day-of-week, e.g. 0 9 * * 1-5. Empty: run by hand only."
      />
      <Field form={form} name="timezone" label="Time zone" hint="IANA name, e.g. Europe/Berlin." />
      <div>
        <button type="submit">Create routine</button>
      </div>
    </Form>
  );
}

interface RoutinesView {
  form?: FormState;
  alert?: string;
  /** A refused Delete, next to its button. */
  refusal?: ActionRefusal;
  status?: ContentfulStatusCode;
}

async function routineEntries(c: RoutineContext, routines: Routine[]): Promise<RoutineEntryData[]> {
  return Promise.all(
    routines.map(async (routine) => {
      const [detail, runs] = await Promise.all([
        c.var.api.get<RoutineDetail>(routineApiPath(routine.id)),
        c.var.api.get<RoutineRun[]>(`${routineApiPath(routine.id)}/runs?limit=${RECENT_RUNS}`),
      ]);
      return { routine: detail, runs };
    }),
  );
}

export async function showRoutines(c: RoutineContext, companyId: string, view: RoutinesView = {}) {
  const company = await loadCompany(c, companyId);
  const base = apiCompanyPath(company.id);
  const [routines, agents, projects, role] = await Promise.all([
    c.var.api.get<Routine[]>(`${base}/routines`),
    loadAgents(c, company.id),
    loadProjects(c, company.id),
    loadMyRole(c, company.id),
  ]);
  const editable = mayChange(role);
  const entries = await routineEntries(c, routines);
  const names = agentNamesOf(agents);
  const projectNames = new Map(projects.map((project) => [project.id, project.name] as const));
  const form = view.form ?? blankForm({ timezone: "UTC" });
  return render(
    c,
    {
      title: `${company.name}: routines`,
      section: "companies",
      company: companyNav(company, "routines"),
      children: (
        <>
          <ActionAlert message={view.alert} />
          <section aria-labelledby="routines-list">
            <h2 id="routines-list">Routines</h2>
            {entries.length === 0 ? (
              <EmptyState>No routines yet.</EmptyState>
            ) : (
              entries.map((entry) => (
                <RoutineEntry
                  {...entry}
                  names={names}
                  projects={projectNames}
                  csrf={editable ? c.var.csrf : null}
                  refusal={view.refusal}
                />
              ))
            )}
          </section>
          {editable ? (
            <section class="panel" aria-labelledby="routines-new">
              <h2 id="routines-new">New routine</h2>
              {projects.length === 0 && (
                <p class="muted">A routine belongs to a project; this company has none yet.</p>
              )}
              <NewRoutineForm
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
    view.status ?? 200,
  );
}

routinePages.get("/companies/:companyId/routines", (c) => showRoutines(c, c.req.param("companyId")));

interface Schedule {
  kind: "schedule";
  cronExpression: string;
  timezone?: string;
}

/**
 * Creating a scheduled routine takes two API calls (the routine, then its trigger), and the API has
 * no way to delete a routine. So the schedule is checked first with the API's own trigger schema and
 * cron parser (the same code and messages the trigger route uses; nothing is written), and the routine
 * is created only when the schedule would be accepted. Should the trigger still be refused afterwards
 * (it cannot be, short of a race with a code change), the new routine is archived and the page says so.
 */
function scheduleProblems(schedule: Schedule): FieldErrors | null {
  const parsed = CreateTriggerBodySchema.safeParse(schedule);
  if (!parsed.success) {
    const errors: FieldErrors = {};
    for (const issue of parsed.error.issues)
      errors[String(issue.path[0] ?? "cronExpression")] ??= issue.message;
    return errors;
  }
  try {
    firstTick(schedule.cronExpression, schedule.timezone ?? "UTC", Date.now());
    return null;
  } catch (error) {
    const message = error instanceof ApiError ? (error.detail ?? error.message) : String(error);
    const match = message.match(/^(cronExpression|timezone): (.+)$/s);
    return match?.[1] && match[2] ? { [match[1]]: match[2] } : { cronExpression: message };
  }
}

routinePages.post("/companies/:companyId/routines", async (c) => {
  const companyId = c.req.param("companyId");
  const values = c.var.form;
  const cron = optionalText(values.cronExpression);
  const schedule: Schedule | null = cron
    ? { kind: "schedule", cronExpression: cron, timezone: optionalText(values.timezone) }
    : null;
  const problems = schedule ? scheduleProblems(schedule) : null;
  if (problems) return showRoutines(c, companyId, { form: { values, errors: problems }, status: 422 });

  const created = await c.var.api.send<RoutineDetail>("POST", `${apiCompanyPath(companyId)}/routines`, {
    title: values.title ?? "",
    assigneeAgentId: optionalText(values.assigneeAgentId),
    projectId: optionalText(values.projectId),
  });
  if (!created.ok)
    return showRoutines(c, companyId, {
      form: failedForm(values, created, ROUTINE_FIELDS),
      status: failureStatus(created),
    });
  const routine = created.data;
  if (!schedule)
    return redirectWithFlash(
      c,
      `/companies/${routine.companyId}/routines`,
      `Routine ${routine.title} created`,
    );

  const trigger = await c.var.api.send<CreatedTrigger>(
    "POST",
    `${routineApiPath(routine.id)}/triggers`,
    schedule,
  );
  if (!trigger.ok) {
    await c.var.api.send("PATCH", routineApiPath(routine.id), { status: "archived" });
    const form = failedForm(values, trigger, ROUTINE_FIELDS);
    form.errors._form = `The routine was created but its schedule was refused, so it has been archived: ${trigger.error}`;
    if (!form.errors.cronExpression && !form.errors.timezone) form.errors.cronExpression = trigger.error;
    return showRoutines(c, companyId, { form, status: failureStatus(trigger) });
  }
  return redirectWithFlash(c, `/companies/${routine.companyId}/routines`, `Routine ${routine.title} created`);
});

routinePages.post("/routines/:routineId/run", async (c) => {
  const path = routineApiPath(c.req.param("routineId"));
  const routine = await c.var.api.get<RoutineDetail>(path);
  const result = await c.var.api.send<RoutineRun>("POST", `${path}/run`, {});
  if (!result.ok)
    return showRoutines(c, routine.companyId, {
      alert: `${routine.title}: ${result.error}`,
      status: failureStatus(result),
    });
  const outcome = result.data.status.replace(/_/g, " ");
  return redirectWithFlash(c, `/companies/${routine.companyId}/routines`, `${routine.title} ran: ${outcome}`);
});
