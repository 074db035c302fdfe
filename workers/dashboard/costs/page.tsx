import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type {
  AgentCostSchema,
  CostSummarySchema,
  ModelCostSchema,
  ProjectCostSchema,
} from "../../control/costs";
import { loadProjects, type Project } from "../issues/board-page";
import {
  ActionAlert,
  type Agent,
  apiCompanyPath,
  type BoardContext,
  type Company,
  companyNav,
  dollars,
  failedForm,
  loadAgents,
  loadCompany,
  optionalNumber,
  refusalView,
} from "../ui/board-shared";
import {
  type ActionRefusal,
  blankForm,
  DataTable,
  EmptyState,
  type FormState,
  type Option,
  StatusBadge,
  Time,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { loadMyRole } from "../ui/member-shared";
import { failureStatus, redirectWithFlash, render } from "../ui/render";
import {
  BUDGET_FORM_FIELDS,
  type Budget,
  BudgetsSection,
  ByModel,
  type Incident,
  IncidentsSection,
  parseTarget,
} from "./budgets";

type CostSummary = z.infer<typeof CostSummarySchema>;
type AgentCost = z.infer<typeof AgentCostSchema>;
type ProjectCost = z.infer<typeof ProjectCostSchema>;
type ModelCost = z.infer<typeof ModelCostSchema>;

export const costPage = new Hono<DashboardEnv>();

interface Bar {
  label: string;
  cents: number;
}

/** Chart geometry in SVG user units; the chart scales to its container (CSS), not these numbers. */
const LABEL_WIDTH = 190;
const BAR_AREA = 330;
const VALUE_GAP = 6;
const ROW_HEIGHT = 28;
const BAR_HEIGHT = 16;
const CHART_WIDTH = LABEL_WIDTH + BAR_AREA + 110;
const MAX_LABEL_CHARS = 26;

const shorten = (label: string) =>
  label.length > MAX_LABEL_CHARS ? `${label.slice(0, MAX_LABEL_CHARS - 1)}…` : label;

/** A spend of zero draws no bar; any spend at all draws at least one unit, so it stays visible. */
export function barWidth(cents: number, max: number): number {
  if (cents <= 0 || max <= 0) return 0;
  return Math.max(1, Math.round((cents / max) * BAR_AREA));
}

/**
 * A horizontal bar chart drawn on the server: widths are attributes, so the CSP's ban on inline
 * styles holds and the chart needs no script. The same numbers are always in a table next to it.
 */
function BarChart({ label, bars }: { label: string; bars: Bar[] }) {
  const max = Math.max(0, ...bars.map((bar) => bar.cents));
  const height = Math.max(1, bars.length) * ROW_HEIGHT;
  return (
    <svg
      class="chart"
      role="img"
      aria-label={label}
      viewBox={`0 0 ${CHART_WIDTH} ${height}`}
      width={CHART_WIDTH}
      height={height}
    >
      <title>{label}</title>
      {bars.map((bar, index) => {
        const y = index * ROW_HEIGHT;
        const width = barWidth(bar.cents, max);
        return (
          <g>
            <text x={0} y={y + BAR_HEIGHT}>
              {shorten(bar.label)}
            </text>
            <rect class="bar" x={LABEL_WIDTH} y={y + 4} width={width} height={BAR_HEIGHT} />
            <text x={LABEL_WIDTH + width + VALUE_GAP} y={y + BAR_HEIGHT}>
              {dollars(bar.cents)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

function SummarySection({ summary }: { summary: CostSummary }) {
  const bars: Bar[] = [{ label: "Spent", cents: summary.spendCents }];
  if (summary.budgetCents > 0) bars.push({ label: "Monthly budget", cents: summary.budgetCents });
  return (
    <section class="panel" aria-labelledby="costs-summary">
      <h2 id="costs-summary">This month</h2>
      <p>
        <Time value={summary.from} /> to <Time value={summary.to} />
      </p>
      <p>
        Spent <strong>{dollars(summary.spendCents)}</strong>
        {summary.budgetCents > 0
          ? ` of a ${dollars(summary.budgetCents)} budget (${summary.utilizationPercent ?? 0}%).`
          : "; the company has no monthly budget."}
      </p>
      <BarChart label="Spend against the monthly budget" bars={bars} />
    </section>
  );
}

function TokenCells({
  row,
}: {
  row: Pick<AgentCost, "inputTokens" | "cachedInputTokens" | "outputTokens" | "eventCount">;
}) {
  return (
    <>
      <td>{row.inputTokens.toLocaleString("en-US")}</td>
      <td>{row.cachedInputTokens.toLocaleString("en-US")}</td>
      <td>{row.outputTokens.toLocaleString("en-US")}</td>
      <td>{row.eventCount}</td>
    </>
  );
}

const TOKEN_HEADERS = ["Input tokens", "Cached input tokens", "Output tokens", "Events"];

function ByAgent({ rows }: { rows: AgentCost[] }) {
  return (
    <section aria-labelledby="costs-agents">
      <h2 id="costs-agents">By agent</h2>
      {rows.length === 0 ? (
        <EmptyState>No costs recorded this month.</EmptyState>
      ) : (
        <>
          <BarChart
            label="Spend by agent"
            bars={rows.map((row) => ({ label: row.agentName, cents: row.costCents }))}
          />
          <DataTable headings={["Agent", "Status", "Spent", ...TOKEN_HEADERS]}>
            {rows.map((row) => (
              <tr>
                <td>{row.agentName}</td>
                <td>
                  <StatusBadge status={row.agentStatus} />
                </td>
                <td>{dollars(row.costCents)}</td>
                <TokenCells row={row} />
              </tr>
            ))}
          </DataTable>
        </>
      )}
    </section>
  );
}

const projectLabel = (row: ProjectCost) => row.projectName ?? "No project";

function ByProject({ rows }: { rows: ProjectCost[] }) {
  return (
    <section aria-labelledby="costs-projects">
      <h2 id="costs-projects">By project</h2>
      {rows.length === 0 ? (
        <EmptyState>No costs recorded this month.</EmptyState>
      ) : (
        <>
          <BarChart
            label="Spend by project"
            bars={rows.map((row) => ({ label: projectLabel(row), cents: row.costCents }))}
          />
          <DataTable headings={["Project", "Spent", ...TOKEN_HEADERS]}>
            {rows.map((row) => (
              <tr>
                <td>{projectLabel(row)}</td>
                <td>{dollars(row.costCents)}</td>
                <TokenCells row={row} />
              </tr>
            ))}
          </DataTable>
        </>
      )}
    </section>
  );
}

interface CostsView {
  budget?: FormState;
  refusal?: ActionRefusal;
  alert?: string;
  status?: ContentfulStatusCode;
}

/** What a budget can be set on: the company, each project, each agent. */
const budgetTargets = (company: Company, projects: Project[], agents: Agent[]): Option[] => [
  { value: `company:${company.id}`, label: `Company: ${company.name}` },
  ...projects.map((project) => ({ value: `project:${project.id}`, label: `Project: ${project.name}` })),
  ...agents.map((agent) => ({ value: `agent:${agent.id}`, label: `Agent: ${agent.name}` })),
];

async function showCosts(c: BoardContext, companyId: string, view: CostsView = {}) {
  const company = await loadCompany(c, companyId);
  const base = apiCompanyPath(company.id);
  const [summary, byAgent, byProject, byModel, budgets, incidents, projects, agents, role] =
    await Promise.all([
      c.var.api.get<CostSummary>(`${base}/costs/summary`),
      c.var.api.get<AgentCost[]>(`${base}/costs/by-agent`),
      c.var.api.get<ProjectCost[]>(`${base}/costs/by-project`),
      c.var.api.get<ModelCost[]>(`${base}/costs/by-model`),
      c.var.api.get<Budget[]>(`${base}/budgets`),
      c.var.api.get<Incident[]>(`${base}/budget-incidents?status=open`),
      loadProjects(c, company.id),
      loadAgents(c, company.id),
      loadMyRole(c, company.id),
    ]);
  const owner = role === "owner";
  const names = new Map<string, string>([
    [company.id, company.name],
    ...projects.map((project) => [project.id, project.name] as const),
    ...agents.map((agent) => [agent.id, agent.name] as const),
  ]);
  return render(
    c,
    {
      title: `${company.name}: costs`,
      section: "companies",
      company: companyNav(company, "costs"),
      children: (
        <>
          <ActionAlert message={view.alert} />
          <SummarySection summary={summary} />
          <IncidentsSection
            incidents={incidents}
            names={names}
            csrf={c.var.csrf}
            owner={owner}
            refusal={view.refusal}
          />
          <BudgetsSection
            budgets={budgets}
            targets={owner ? budgetTargets(company, projects, agents) : []}
            companyId={company.id}
            csrf={c.var.csrf}
            form={view.budget ?? blankForm({ window: "month" })}
          />
          <ByAgent rows={byAgent} />
          <ByProject rows={byProject} />
          <ByModel rows={byModel} />
        </>
      ),
    },
    view.status,
  );
}

costPage.get("/companies/:companyId/costs", (c) => showCosts(c, c.req.param("companyId")));

costPage.post("/companies/:companyId/budgets", async (c) => {
  const companyId = c.req.param("companyId");
  const values = c.var.form;
  const target = parseTarget(values.target);
  if (!target)
    return showCosts(c, companyId, {
      budget: { values, errors: { target: "Choose what the budget applies to" } },
      status: 400,
    });
  const result = await c.var.api.send<Budget>("PUT", `${apiCompanyPath(companyId)}/budgets`, {
    ...target,
    window: values.window ?? "month",
    amountCents: optionalNumber(values.amountCents) ?? 0,
  });
  if (!result.ok)
    return showCosts(c, companyId, {
      budget: failedForm(values, result, BUDGET_FORM_FIELDS, { scope: "target", scopeId: "target" }),
      status: failureStatus(result),
    });
  return redirectWithFlash(c, `/companies/${encodeURIComponent(companyId)}/costs`, "Budget saved");
});

costPage.post("/companies/:companyId/budget-incidents/:incidentId/resolve", async (c) => {
  const companyId = c.req.param("companyId");
  const incidentId = c.req.param("incidentId");
  const values = c.var.form;
  const body =
    values.action === "dismiss"
      ? { action: "dismiss" }
      : { action: "raise_budget_and_resume", amountCents: optionalNumber(values.amountCents) };
  const path = `${apiCompanyPath(companyId)}/budget-incidents/${encodeURIComponent(incidentId)}/resolve`;
  const result = await c.var.api.send<Incident>("POST", path, body);
  if (!result.ok)
    return showCosts(c, companyId, {
      ...refusalView(result, `resolve-${incidentId}`),
      status: failureStatus(result),
    });
  const done = values.action === "dismiss" ? "Warning dismissed" : "Budget raised; its runs may start again";
  return redirectWithFlash(c, `/companies/${encodeURIComponent(companyId)}/costs`, done);
});
