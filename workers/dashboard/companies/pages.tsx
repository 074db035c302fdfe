import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { ActivitySchema, DashboardSchema } from "../../control/companies";
import {
  actorLabel,
  agentNamesOf,
  apiCompanyPath,
  type BoardContext,
  type Company,
  companyNav,
  dollars,
  failedForm,
  loadAgents,
  loadCompany,
  optionalNumber,
  optionalText,
} from "../ui/board-shared";
import {
  blankForm,
  CheckboxField,
  DataTable,
  EmptyState,
  Field,
  Form,
  type FormState,
  StatusBadge,
  TextAreaField,
  Time,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { failureStatus, redirectWithFlash, render } from "../ui/render";

type Dashboard = z.infer<typeof DashboardSchema>;
type Activity = z.infer<typeof ActivitySchema>;

// ---------------------------------------------------------------------------------------------
// GET /companies, POST /companies, GET /companies/:id
// ---------------------------------------------------------------------------------------------

export const companyPages = new Hono<DashboardEnv>();

const COMPANY_FIELDS = [
  "name",
  "description",
  "budgetMonthlyCents",
  "requireBoardApprovalForNewAgents",
] as const;

function CompaniesTable({ companies }: { companies: Company[] }) {
  if (companies.length === 0) return <EmptyState>You are not on the board of any company yet.</EmptyState>;
  return (
    <DataTable headings={["Company", "Issue prefix", "Status", "Spent this month", "Monthly budget"]}>
      {companies.map((company) => (
        <tr>
          <td>
            <a href={`/companies/${company.id}`}>{company.name}</a>
          </td>
          <td>{company.issuePrefix}</td>
          <td>
            <StatusBadge status={company.status} />
          </td>
          <td>{dollars(company.spentMonthlyCents)}</td>
          <td>{company.budgetMonthlyCents > 0 ? dollars(company.budgetMonthlyCents) : "No limit"}</td>
        </tr>
      ))}
    </DataTable>
  );
}

function NewCompanyForm({ csrf, form }: { csrf: string; form: FormState }) {
  return (
    <Form action="/companies" csrf={csrf} form={form} label="New company">
      <Field form={form} name="name" label="Company name" required />
      <TextAreaField form={form} name="description" label="Description" rows={3} />
      <Field
        form={form}
        name="budgetMonthlyCents"
        label="Monthly budget (cents)"
        type="number"
        min="0"
        step="1"
        hint="Optional; 0 or empty means no limit."
      />
      <CheckboxField
        form={form}
        name="requireBoardApprovalForNewAgents"
        label="New agents need board approval"
      />
      <div>
        <button type="submit">Create company</button>
      </div>
    </Form>
  );
}

async function showCompanies(c: BoardContext, form: FormState, status: ContentfulStatusCode = 200) {
  const companies = await c.var.api.get<Company[]>("/api/companies");
  return render(
    c,
    {
      title: "Companies",
      section: "companies",
      children: (
        <>
          <section aria-labelledby="companies-list">
            <h2 id="companies-list">Your companies</h2>
            <CompaniesTable companies={companies} />
          </section>
          <section class="panel" aria-labelledby="companies-new">
            <h2 id="companies-new">New company</h2>
            <NewCompanyForm csrf={c.var.csrf} form={form} />
          </section>
        </>
      ),
    },
    status,
  );
}

companyPages.get("/companies", (c) =>
  showCompanies(c, blankForm({ requireBoardApprovalForNewAgents: "on" })),
);

companyPages.post("/companies", async (c) => {
  const values = c.var.form;
  const result = await c.var.api.send<Company>("POST", "/api/companies", {
    name: values.name ?? "",
    description: optionalText(values.description),
    budgetMonthlyCents: optionalNumber(values.budgetMonthlyCents),
    requireBoardApprovalForNewAgents: values.requireBoardApprovalForNewAgents === "on",
  });
  if (!result.ok) {
    return showCompanies(c, failedForm(values, result, COMPANY_FIELDS), failureStatus(result));
  }
  return redirectWithFlash(c, `/companies/${result.data.id}`, `Company ${result.data.name} created`);
});

function CountList({ counts }: { counts: Record<string, number> }) {
  return (
    <dl class="facts">
      {Object.entries(counts).map(([status, n]) => (
        <>
          <dt>{status.replace(/_/g, " ")}</dt>
          <dd>{n}</dd>
        </>
      ))}
    </dl>
  );
}

/** Link texts here avoid the tab names ("Org chart", "Approvals", …): each tab stays the only link so named. */
function SummaryPanels({ company, dashboard }: { company: Company; dashboard: Dashboard }) {
  const { agents, issues, spend } = dashboard;
  return (
    <div class="grid">
      <section class="panel" aria-labelledby="overview-issues">
        <h2 id="overview-issues">Issues</h2>
        <p>
          {issues.open} open of {issues.total}. <a href={`/companies/${company.id}/issues`}>Open the board</a>
        </p>
        <CountList counts={issues.byStatus} />
      </section>
      <section class="panel" aria-labelledby="overview-agents">
        <h2 id="overview-agents">Agents</h2>
        <p>
          {agents.total} in total. <a href={`/companies/${company.id}/org`}>See who reports to whom</a>
        </p>
        <CountList counts={agents.byStatus} />
      </section>
      <section class="panel" aria-labelledby="overview-spend">
        <h2 id="overview-spend">Spend this month</h2>
        <p>
          {spend.budgetMonthlyCents > 0
            ? `${dollars(spend.spentMonthlyCents)} of ${dollars(spend.budgetMonthlyCents)} (${spend.utilizationPercent}%).`
            : `${dollars(spend.spentMonthlyCents)} spent; no monthly budget.`}{" "}
          <a href={`/companies/${company.id}/costs`}>Spend in detail</a>
        </p>
        <p>
          {dashboard.pendingApprovals === 0 ? (
            "Nothing waiting for a board decision."
          ) : (
            <a href={`/companies/${company.id}/approvals`}>
              {dashboard.pendingApprovals} request{dashboard.pendingApprovals === 1 ? "" : "s"} waiting for a
              board decision
            </a>
          )}
        </p>
      </section>
    </div>
  );
}

function StaleTasks({ dashboard }: { dashboard: Dashboard }) {
  return (
    <section aria-labelledby="overview-stale">
      <h2 id="overview-stale">Stale tasks</h2>
      {dashboard.staleTasks.length === 0 ? (
        <EmptyState>No in-progress issue has been left untouched for a day.</EmptyState>
      ) : (
        <ul>
          {dashboard.staleTasks.map((task) => (
            <li>
              <a href={`/issues/${task.id}`}>
                {task.identifier} {task.title}
              </a>{" "}
              <span class="muted">
                last updated <Time value={task.updatedAt} />
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** "issue.created" → "issue created"; the entity's own title or name when the details carry one. */
function describeActivity(entry: Activity): string {
  const what = entry.action.replace(/[._]/g, " ");
  const label = [entry.details.title, entry.details.name, entry.details.type].find(
    (value): value is string => typeof value === "string" && value !== "",
  );
  return label ? `${what}: ${label}` : what;
}

function ActivityTable({
  activity,
  names,
  viewerId,
}: {
  activity: Activity[];
  names: ReadonlyMap<string, string>;
  viewerId: string;
}) {
  return (
    <section aria-labelledby="overview-activity">
      <h2 id="overview-activity">Recent activity</h2>
      {activity.length === 0 ? (
        <EmptyState>Nothing has happened yet.</EmptyState>
      ) : (
        <DataTable headings={["When", "Who", "What"]}>
          {activity.map((entry) => (
            <tr>
              <td>
                <Time value={entry.createdAt} />
              </td>
              <td>
                {actorLabel(viewerId, names, {
                  type: entry.actorType,
                  id: entry.actorId,
                  name: entry.actorName,
                })}
              </td>
              <td>{describeActivity(entry)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

const RECENT_ACTIVITY = 30;

companyPages.get("/companies/:companyId", async (c) => {
  const company = await loadCompany(c, c.req.param("companyId"));
  const base = apiCompanyPath(company.id);
  const [dashboard, activity, agents] = await Promise.all([
    c.var.api.get<Dashboard>(`${base}/dashboard`),
    c.var.api.get<Activity[]>(`${base}/activity?limit=${RECENT_ACTIVITY}`),
    loadAgents(c, company.id),
  ]);
  return render(c, {
    title: company.name,
    section: "companies",
    company: companyNav(company, "overview"),
    children: (
      <>
        {company.description && <p>{company.description}</p>}
        <p class="muted">
          Issue prefix {company.issuePrefix} · <StatusBadge status={company.status} /> · new agents{" "}
          {company.requireBoardApprovalForNewAgents ? "need board approval" : "start without approval"}
        </p>
        <SummaryPanels company={company} dashboard={dashboard} />
        <StaleTasks dashboard={dashboard} />
        <ActivityTable activity={activity} names={agentNamesOf(agents)} viewerId={c.var.viewer.id} />
      </>
    ),
  });
});
