import { Hono } from "hono";
import type { z } from "zod";
import type { AgentCostSchema, CostSummarySchema, ProjectCostSchema } from "../../control/costs";
import { apiCompanyPath, companyNav, dollars, loadCompany } from "../ui/board-shared";
import { DataTable, EmptyState, StatusBadge, Time } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { render } from "../ui/render";

type CostSummary = z.infer<typeof CostSummarySchema>;
type AgentCost = z.infer<typeof AgentCostSchema>;
type ProjectCost = z.infer<typeof ProjectCostSchema>;

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

costPage.get("/companies/:companyId/costs", async (c) => {
  const company = await loadCompany(c, c.req.param("companyId"));
  const base = `${apiCompanyPath(company.id)}/costs`;
  const [summary, byAgent, byProject] = await Promise.all([
    c.var.api.get<CostSummary>(`${base}/summary`),
    c.var.api.get<AgentCost[]>(`${base}/by-agent`),
    c.var.api.get<ProjectCost[]>(`${base}/by-project`),
  ]);
  return render(c, {
    title: `${company.name}: costs`,
    section: "companies",
    company: companyNav(company, "costs"),
    children: (
      <>
        <SummarySection summary={summary} />
        <ByAgent rows={byAgent} />
        <ByProject rows={byProject} />
      </>
    ),
  });
});
