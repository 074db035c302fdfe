import { Hono } from "hono";
import type { z } from "zod";
import type { ActivitySchema } from "../../control/companies";
import {
  type Agent,
  actorLabel,
  agentNamesOf,
  apiCompanyPath,
  type Company,
  companyNav,
  loadAgents,
  loadCompany,
  placeFieldMessages,
} from "../ui/board-shared";
import {
  DataTable,
  EmptyState,
  Field,
  type FormState,
  type Option,
  SelectField,
  Time,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { render } from "../ui/render";

// ---------------------------------------------------------------------------------------------
// GET /companies/:id/activity: the whole log, filtered by who, what kind of thing, which action and
// when, a page at a time (older entries continue after the last one shown).
// ---------------------------------------------------------------------------------------------

type Activity = z.infer<typeof ActivitySchema>;

export const activityPage = new Hono<DashboardEnv>();

const PAGE_SIZE = 50;
const FILTERS = ["actor", "entityType", "action", "since", "until"] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

/** The entity types the control plane logs (`activityInsert` callers). */
const ENTITY_TYPES = [
  "agent",
  "approval",
  "company",
  "cost_event",
  "document",
  "goal",
  "heartbeat_run",
  "invite",
  "issue",
  "label",
  "project",
  "routine",
  "routine_trigger",
  "runner",
  "secret",
  "skill",
] as const;

function actorOptions(agents: readonly Agent[]): Option[] {
  return [
    { value: "", label: "Anyone" },
    { value: "user", label: "Board members" },
    { value: "agent", label: "Any agent" },
    { value: "system", label: "The system" },
    ...agents.map((agent) => ({ value: `agent:${agent.id}`, label: `Agent ${agent.name}` })),
  ];
}

/** The page's filters as the API's query: `actor` is either a kind of actor or one agent. */
function apiQuery(filters: Filters, before: string | undefined): URLSearchParams {
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  const actor = filters.actor ?? "";
  if (actor.startsWith("agent:")) query.set("agentId", actor.slice("agent:".length));
  else if (actor) query.set("actorType", actor);
  for (const name of ["entityType", "action", "since", "until"] as const) {
    const value = filters[name]?.trim();
    if (value) query.set(name, value);
  }
  if (before) query.set("before", before);
  return query;
}

function pageQuery(filters: Filters, before: string): string {
  const query = new URLSearchParams();
  for (const name of FILTERS) if (filters[name]) query.set(name, filters[name] ?? "");
  query.set("before", before);
  return query.toString();
}

function describe(entry: Activity): string {
  const label = [entry.details.title, entry.details.name, entry.details.identifier].find(
    (value): value is string => typeof value === "string" && value !== "",
  );
  return label ? `${entry.entityType} ${label}` : entry.entityType;
}

function FilterForm(props: { company: Company; agents: Agent[]; form: FormState }) {
  const { form } = props;
  return (
    <form
      method="get"
      action={`/companies/${props.company.id}/activity`}
      class="row"
      aria-label="Filter the log"
      novalidate
    >
      <SelectField form={form} name="actor" label="Who" options={actorOptions(props.agents)} />
      <SelectField
        form={form}
        name="entityType"
        label="Entity type"
        options={[
          { value: "", label: "Any" },
          ...ENTITY_TYPES.map((type) => ({ value: type, label: type.replace(/_/g, " ") })),
        ]}
      />
      <Field form={form} name="action" label="Action" hint="e.g. agent.updated, or agent. for all" />
      <Field form={form} name="since" label="From (date)" hint="YYYY-MM-DD, UTC" />
      <Field form={form} name="until" label="Before (date)" hint="YYYY-MM-DD, UTC" />
      <div>
        <button type="submit">Filter</button>
      </div>
    </form>
  );
}

function LogTable(props: { entries: Activity[]; names: ReadonlyMap<string, string>; viewerId: string }) {
  if (props.entries.length === 0) return <EmptyState>Nothing matches these filters.</EmptyState>;
  return (
    <DataTable headings={["When", "Who", "Action", "On"]}>
      {props.entries.map((entry) => (
        <tr>
          <td>
            <Time value={entry.createdAt} />
          </td>
          <td>
            {actorLabel(props.viewerId, props.names, {
              type: entry.actorType,
              id: entry.actorId,
              name: entry.actorName,
            })}
          </td>
          <td>
            <code>{entry.action}</code>
          </td>
          <td>{describe(entry)}</td>
        </tr>
      ))}
    </DataTable>
  );
}

activityPage.get("/companies/:companyId/activity", async (c) => {
  const company = await loadCompany(c, c.req.param("companyId"));
  const filters: Filters = {};
  for (const name of FILTERS) {
    const value = c.req.query(name);
    if (value) filters[name] = value;
  }
  const before = c.req.query("before") || undefined;
  const [agents, result] = await Promise.all([
    loadAgents(c, company.id),
    c.var.api.read<Activity[]>(`${apiCompanyPath(company.id)}/activity?${apiQuery(filters, before)}`),
  ]);
  const form: FormState = {
    values: filters,
    errors: result.ok ? {} : placeFieldMessages(result, FILTERS),
  };
  const entries = result.ok ? result.data : [];
  const last = entries.length === PAGE_SIZE ? entries[entries.length - 1] : undefined;
  return render(
    c,
    {
      title: `${company.name}: activity`,
      section: "companies",
      company: companyNav(company, "activity"),
      children: (
        <>
          {!result.ok && form.errors._form && (
            <p class="alert" role="alert">
              {form.errors._form}
            </p>
          )}
          <FilterForm company={company} agents={agents} form={form} />
          <section aria-labelledby="activity-log">
            <h2 id="activity-log">Log</h2>
            {before && (
              <p>
                <a href={`/companies/${company.id}/activity`}>Back to the newest entries</a>
              </p>
            )}
            {result.ok && (
              <LogTable entries={entries} names={agentNamesOf(agents)} viewerId={c.var.viewer.id} />
            )}
            {last && (
              <p>
                <a href={`/companies/${company.id}/activity?${pageQuery(filters, last.id)}`}>Older entries</a>
              </p>
            )}
          </section>
        </>
      ),
    },
    result.ok ? 200 : result.status === 404 ? 404 : 400,
  );
});
