import type { z } from "zod";
import type { BudgetSchema, IncidentSchema } from "../../control/budgets";
import type { ModelCostSchema } from "../../control/costs";
import { dollars } from "../ui/board-shared";
import {
  ActionButton,
  type ActionRefusal,
  DataTable,
  EmptyState,
  Field,
  Form,
  type FormState,
  type Option,
  refusalNamed,
  SelectField,
  StatusBadge,
  Time,
} from "../ui/components";

/** The costs page's budget parts: every budget, the open incidents (resolved here), spend by model. */

export type Budget = z.infer<typeof BudgetSchema>;
export type Incident = z.infer<typeof IncidentSchema>;
type ModelCost = z.infer<typeof ModelCostSchema>;

export const BUDGET_FORM_FIELDS = ["target", "window", "amountCents"];

const windowLabel = (window: string) => (window === "lifetime" ? "Lifetime" : "Month (UTC)");
const scopeLabel = (scope: string) => scope.charAt(0).toUpperCase() + scope.slice(1);

/** `company:<id>`, `project:<id>`, `agent:<id>`: one select names both the scope and what it covers. */
export function parseTarget(value: string | undefined): { scope: string; scopeId: string } | null {
  const [scope, scopeId] = (value ?? "").split(":");
  return scope && scopeId ? { scope, scopeId } : null;
}

export function BudgetsSection(props: {
  budgets: Budget[];
  /** What a budget can be set on; empty for someone who may not set budgets (not an owner). */
  targets: Option[];
  companyId: string;
  csrf: string;
  form: FormState;
}) {
  return (
    <section class="panel" aria-labelledby="costs-budgets">
      <h2 id="costs-budgets">Budgets</h2>
      {props.budgets.length === 0 ? (
        <EmptyState>No budgets: nothing limits what the company's agents spend.</EmptyState>
      ) : (
        <DataTable headings={["Applies to", "Window", "Spent", "Budget", "Status"]}>
          {props.budgets.map((budget) => (
            <tr>
              <td>
                {scopeLabel(budget.scope)}: {budget.scopeName}
              </td>
              <td>{windowLabel(budget.window)}</td>
              <td>{dollars(budget.spentCents)}</td>
              <td>{dollars(budget.amountCents)}</td>
              <td>
                <StatusBadge status={budget.status} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {props.targets.length > 0 && (
        <Form
          action={`/companies/${encodeURIComponent(props.companyId)}/budgets`}
          csrf={props.csrf}
          form={props.form}
          label="Set a budget"
        >
          <SelectField form={props.form} name="target" label="Applies to" options={props.targets} required />
          <SelectField
            form={props.form}
            name="window"
            label="Window"
            options={[
              { value: "month", label: "Calendar month (UTC)" },
              { value: "lifetime", label: "Lifetime" },
            ]}
          />
          <Field
            form={props.form}
            name="amountCents"
            label="Budget (cents)"
            type="number"
            min="0"
            step="1"
            required
            hint="0 removes the budget. At 80 % the board is warned; at 100 % no run it covers starts."
          />
          <div>
            <button type="submit">Save budget</button>
          </div>
        </Form>
      )}
    </section>
  );
}

function IncidentActions(props: { incident: Incident; csrf: string; refusal?: ActionRefusal }) {
  const { incident, csrf } = props;
  const action = `/companies/${encodeURIComponent(incident.companyId)}/budget-incidents/${encodeURIComponent(incident.id)}/resolve`;
  if (incident.threshold === "soft")
    return (
      <ActionButton
        action={action}
        csrf={csrf}
        label="Dismiss"
        variant="secondary"
        hidden={{ action: "dismiss" }}
        error={refusalNamed(props.refusal, `resolve-${incident.id}`)}
      />
    );
  const form: FormState = {
    values: { action: "raise_budget_and_resume", amountCents: String(incident.amountCents * 2) },
    errors: props.refusal?.name === `resolve-${incident.id}` ? { amountCents: props.refusal.message } : {},
  };
  return (
    <Form action={action} csrf={csrf} form={form} class="inline" label={`Raise the budget (${incident.id})`}>
      <input type="hidden" name="action" value="raise_budget_and_resume" />
      <Field
        form={form}
        name="amountCents"
        label="New budget (cents)"
        type="number"
        min="1"
        step="1"
        required
      />
      <button type="submit">Raise and resume</button>
    </Form>
  );
}

export function IncidentsSection(props: {
  incidents: Incident[];
  names: ReadonlyMap<string, string>;
  csrf: string;
  owner: boolean;
  refusal?: ActionRefusal;
}) {
  return (
    <section class="panel" aria-labelledby="costs-incidents">
      <h2 id="costs-incidents">Budget incidents</h2>
      {props.incidents.length === 0 ? (
        <EmptyState>No open incidents.</EmptyState>
      ) : (
        <DataTable
          headings={[
            "Since",
            "Applies to",
            "Threshold",
            "Spent",
            "Budget",
            ...(props.owner ? ["Resolve"] : []),
          ]}
        >
          {props.incidents.map((incident) => (
            <tr>
              <td>
                <Time value={incident.createdAt} />
              </td>
              <td>
                {scopeLabel(incident.scope)}: {props.names.get(incident.scopeId) ?? incident.scopeId} (
                {windowLabel(incident.window).toLowerCase()})
              </td>
              <td>
                <StatusBadge status={incident.threshold === "hard" ? "exceeded" : "warning"} />
              </td>
              <td>{dollars(incident.spentCents)}</td>
              <td>{dollars(incident.amountCents)}</td>
              {props.owner && (
                <td>
                  <IncidentActions incident={incident} csrf={props.csrf} refusal={props.refusal} />
                </td>
              )}
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

export function ByModel({ rows }: { rows: ModelCost[] }) {
  return (
    <section aria-labelledby="costs-models">
      <h2 id="costs-models">By provider and model</h2>
      {rows.length === 0 ? (
        <EmptyState>No costs recorded this month.</EmptyState>
      ) : (
        <DataTable headings={["Provider", "Model", "Spent", "Events"]}>
          {rows.map((row) => (
            <tr>
              <td>{row.provider}</td>
              <td>{row.model ?? "—"}</td>
              <td>{dollars(row.costCents)}</td>
              <td>{row.eventCount}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
