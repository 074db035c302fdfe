import { createRoute, z } from "@hono/zod-openapi";
import { refOf } from "../../core/actor";
import { unprocessable } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { rememberOriginFrom, sendQueuedFrom } from "../line";
import { companyForActor, controlContext, requireOwner } from "../shared";
import { BudgetBodySchema, BudgetSchema, budgetResource, CompanyParamSchema } from "./schemas";
import { setBudget } from "./settings";
import { companyBudgets } from "./store";

/**
 * Budgets, all in one place: the company's, each project's and each agent's, monthly (calendar month,
 * UTC) or lifetime. The agent's and company's monthly budgets are their budgetMonthlyCents (the
 * same number, either way in); the others are policies. Incidents: incident-routes.ts.
 */
export const budgetRoutes = createRouter();
const tags = ["Costs"];

budgetRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/budgets",
    tags,
    summary: "Every budget of the company with its spend (board and the company's agents)",
    description:
      "The company first, then projects, then agents, by name. status: `exceeded` (no run the budget " +
      "covers starts), `warning` (past warnPercent) or `ok`.",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(z.array(BudgetSchema), "Budgets"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const now = Date.now();
    const budgets = await companyBudgets(db, company.id, now);
    return c.json(
      budgets.map((budget) => budgetResource(budget, now)),
      200,
    );
  },
);

budgetRoutes.openapi(
  createRoute({
    method: "put",
    path: "/companies/{companyId}/budgets",
    tags,
    summary: "Set a budget: company, project or agent; month or lifetime (owners)",
    description:
      "amountCents 0 removes it. Open incidents the new amount no longer reaches are resolved (runs " +
      "they held may start again); an amount at or under the spend opens the hard incident at once " +
      "(for a project's or lifetime budget, its queued runs are cancelled and its running runs " +
      "stopped). An unknown project or agent, or another company's, is a 404.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(BudgetBodySchema) },
    responses: {
      200: json(BudgetSchema, "The budget as it now is"),
      ...controlErrors,
      422: controlError("scopeId missing for a project or agent"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    await requireOwner(db, actor, company.id, "set budgets");
    const body = c.req.valid("json");
    const scopeId = body.scope === "company" ? company.id : body.scopeId;
    if (scopeId === undefined) throw unprocessable(`scopeId is required for a ${body.scope} budget`);
    await rememberOriginFrom(c, company.id);
    const now = Date.now();
    const key = { companyId: company.id, scope: body.scope, scopeId, window: body.window };
    const by = { actor: refOf(actor), userId: actor.type === "board" ? actor.userId : null, resume: false };
    await setBudget(c.env, db, key, body.amountCents, by, now);
    sendQueuedFrom(c, company.id);
    const listed = (await companyBudgets(db, company.id, now)).find(
      (budget) =>
        budget.scope === key.scope && budget.scopeId === key.scopeId && budget.window === key.window,
    );
    const shown = listed ?? { ...key, amountCents: 0, spentCents: 0, policyId: null, scopeName: scopeId };
    return c.json(budgetResource(shown, now), 200);
  },
);
