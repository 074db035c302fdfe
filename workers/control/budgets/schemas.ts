import { z } from "@hono/zod-openapi";
import { iso } from "../../db/client";
import {
  BUDGET_SCOPES,
  BUDGET_THRESHOLDS,
  BUDGET_WINDOWS,
  type BudgetIncidentRow,
  INCIDENT_RESOLUTIONS,
  INCIDENT_STATUSES,
} from "../../db/schema";
import { thresholdReached } from "./incidents";
import type { NamedBudget } from "./store";
import { SOFT_THRESHOLD_PERCENT, utcMonth, windowStart } from "./windows";

/** Request and response shapes of the budget routes (routes.ts, incident-routes.ts). */

const CENTS_MAX = 100_000_000_000;

export const BudgetBodySchema = z
  .strictObject({
    scope: z.enum(BUDGET_SCOPES),
    scopeId: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .openapi({ description: "The project's or agent's id; omitted (or the company's id) for the company" }),
    window: z
      .enum(BUDGET_WINDOWS)
      .openapi({ description: "month: the calendar month in UTC; lifetime: ever" }),
    amountCents: z
      .number()
      .int()
      .min(0)
      .max(CENTS_MAX)
      .openapi({ description: "0 removes the budget (no limit)" }),
  })
  .openapi("BudgetBody");

export const BudgetSchema = z
  .object({
    scope: z.enum(BUDGET_SCOPES),
    scopeId: z.string(),
    scopeName: z.string(),
    window: z.enum(BUDGET_WINDOWS),
    amountCents: z.number().int(),
    spentCents: z.number().int().openapi({ description: "Spent in the current window" }),
    warnPercent: z.number().int().openapi({ description: "The soft threshold, a share of amountCents" }),
    status: z
      .enum(["ok", "warning", "exceeded"])
      .openapi({ description: "exceeded: no run it covers starts; warning: past warnPercent" }),
    windowStart: z.string().nullable().openapi({ format: "date-time", description: "null for lifetime" }),
    windowEnd: z.string().nullable().openapi({ format: "date-time", description: "null for lifetime" }),
  })
  .openapi("Budget");

export function budgetResource(budget: NamedBudget, now: number) {
  const reached = thresholdReached(budget);
  const month = utcMonth(now);
  return {
    scope: budget.scope,
    scopeId: budget.scopeId,
    scopeName: budget.scopeName,
    window: budget.window,
    amountCents: budget.amountCents,
    spentCents: budget.spentCents,
    warnPercent: SOFT_THRESHOLD_PERCENT,
    status:
      reached === "hard"
        ? ("exceeded" as const)
        : reached === "soft"
          ? ("warning" as const)
          : ("ok" as const),
    windowStart: budget.window === "month" ? iso(windowStart("month", now)) : null,
    windowEnd: budget.window === "month" ? iso(month.end) : null,
  };
}

export const IncidentSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    scope: z.enum(BUDGET_SCOPES),
    scopeId: z.string(),
    window: z.enum(BUDGET_WINDOWS),
    windowStart: z.string().nullable().openapi({ format: "date-time", description: "null for lifetime" }),
    threshold: z.enum(BUDGET_THRESHOLDS).openapi({ description: "soft: past warnPercent; hard: the amount" }),
    amountCents: z.number().int().openapi({ description: "The budget when it was crossed" }),
    spentCents: z.number().int().openapi({ description: "The spend when it was crossed" }),
    costEventId: z.string().nullable(),
    status: z.enum(INCIDENT_STATUSES),
    resolution: z.enum(INCIDENT_RESOLUTIONS).nullable(),
    resolvedByUserId: z.string().nullable(),
    resolvedAt: z.string().nullable().openapi({ format: "date-time" }),
    createdAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("BudgetIncident");

export const incidentResource = (row: BudgetIncidentRow) => ({
  id: row.id,
  companyId: row.companyId,
  scope: row.scopeType,
  scopeId: row.scopeId,
  window: row.window,
  windowStart: row.window === "month" ? iso(row.windowStart) : null,
  threshold: row.threshold,
  amountCents: row.amountCents,
  spentCents: row.spentCents,
  costEventId: row.costEventId,
  status: row.status,
  resolution: row.resolution,
  resolvedByUserId: row.resolvedByUserId,
  resolvedAt: row.resolvedAt === null ? null : iso(row.resolvedAt),
  createdAt: iso(row.createdAt),
});

export const IncidentQuerySchema = z.object({ status: z.enum(INCIDENT_STATUSES).optional() });

export const ResolveBodySchema = z
  .discriminatedUnion("action", [
    z.strictObject({
      action: z.literal("raise_budget_and_resume"),
      amountCents: z.number().int().min(1).max(CENTS_MAX),
    }),
    z.strictObject({ action: z.literal("dismiss") }),
  ])
  .openapi("ResolveBudgetIncidentBody");

export const CompanyParamSchema = z.object({ companyId: z.string() });
