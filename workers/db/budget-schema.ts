import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { companies } from "./control-schema";

/**
 * Budgets beyond the monthly figures on the agent and company rows (issue 32): a project's budget,
 * and lifetime budgets, as policies; and the incidents every budget raises when spend crosses its
 * soft (80 %) or hard (100 %) threshold. An open hard incident is a hold: no run in its scope starts
 * (see wakes/wake.ts) until the board raises the budget. Same conventions as control-schema.ts.
 */

export const BUDGET_SCOPES = ["company", "project", "agent"] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];
/** `month`: the calendar month in UTC; `lifetime`: every cost ever recorded in the scope. */
export const BUDGET_WINDOWS = ["month", "lifetime"] as const;
export type BudgetWindow = (typeof BUDGET_WINDOWS)[number];
export const BUDGET_THRESHOLDS = ["soft", "hard"] as const;
export type BudgetThreshold = (typeof BUDGET_THRESHOLDS)[number];
export const INCIDENT_STATUSES = ["open", "resolved"] as const;
/**
 * raised: the board raised the budget above the spend (and the scope resumed); dismissed: the board
 * acknowledged a warning; escalated: a warning whose budget was then exceeded (the hard incident
 * carries on); window_ended: a monthly window closed; removed: the budget was deleted or lowered to 0.
 */
export const INCIDENT_RESOLUTIONS = ["raised", "dismissed", "escalated", "window_ended", "removed"] as const;

export const budgetPolicies = sqliteTable(
  "budget_policies",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    scopeType: text("scope_type", { enum: BUDGET_SCOPES }).notNull(),
    /** The company's, project's or agent's id. */
    scopeId: text("scope_id").notNull(),
    window: text("window", { enum: BUDGET_WINDOWS }).notNull(),
    amountCents: integer("amount_cents").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("budget_policies_scope_uq").on(t.companyId, t.scopeType, t.scopeId, t.window)],
);

export type BudgetPolicyRow = typeof budgetPolicies.$inferSelect;

export const budgetIncidents = sqliteTable(
  "budget_incidents",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    scopeType: text("scope_type", { enum: BUDGET_SCOPES }).notNull(),
    scopeId: text("scope_id").notNull(),
    window: text("window", { enum: BUDGET_WINDOWS }).notNull(),
    /** The month's first instant (ms) for a monthly budget; 0 for a lifetime one. */
    windowStart: integer("window_start").notNull(),
    threshold: text("threshold", { enum: BUDGET_THRESHOLDS }).notNull(),
    /** The budget when the threshold was crossed: a raised budget crossed again is a new incident. */
    amountCents: integer("amount_cents").notNull(),
    spentCents: integer("spent_cents").notNull(),
    /** The cost event that crossed the threshold; null when the board set the budget below the spend. */
    costEventId: text("cost_event_id"),
    status: text("status", { enum: INCIDENT_STATUSES }).notNull(),
    resolution: text("resolution", { enum: INCIDENT_RESOLUTIONS }),
    resolvedByUserId: text("resolved_by_user_id"),
    resolvedAt: integer("resolved_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    // One incident per crossing: a repeat evaluation of the same window and budget changes nothing.
    uniqueIndex("budget_incidents_crossing_uq").on(
      t.companyId,
      t.scopeType,
      t.scopeId,
      t.window,
      t.windowStart,
      t.threshold,
      t.amountCents,
    ),
    index("budget_incidents_open_idx").on(t.companyId, t.status, t.threshold),
  ],
);

export type BudgetIncidentRow = typeof budgetIncidents.$inferSelect;
