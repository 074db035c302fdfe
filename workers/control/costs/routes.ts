import { createRoute, z } from "@hono/zod-openapi";
import { refOf } from "../../core/actor";
import { iso } from "../../db/client";
import { forbidden, unprocessable } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { utcMonth } from "../budgets";
import { CompanyParamSchema } from "../companies";
import { rememberOriginFrom, sendQueuedFrom } from "../line";
import { companyForActor, controlContext, issueIdIn } from "../shared";
import { recordCostEvent } from "./record";
import {
  AgentCostSchema,
  CostEventBodySchema,
  CostEventSchema,
  CostRangeQuerySchema,
  CostSummarySchema,
  costEventResource,
  ModelCostSchema,
  ProjectCostSchema,
  ProviderCostSchema,
} from "./schemas";
import {
  type CostRange,
  checkCostRefs,
  companySpend,
  costsByAgent,
  costsByModel,
  costsByProject,
  costsByProvider,
} from "./store";

/**
 * Cost events and the spend read-outs. Every event recomputes the agent's and the company's spend for
 * the current UTC month; an agent that reaches its budget is paused on the spot (see pauseOverBudget).
 */
export const costRoutes = createRouter();
const tags = ["Costs"];

costRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/cost-events",
    tags,
    summary: "Report a cost (board; an agent for itself only)",
    description:
      "Recomputes the agent's and the company's spentMonthlyCents (current UTC calendar month) in the " +
      "same batch. When the agent's spend reaches its budgetMonthlyCents (> 0), the agent is paused with " +
      "pauseReason `budget` and its queued runs are cancelled (errorReason agent_over_budget). An event " +
      "with an issueId and no projectId is charged to the issue's project.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(CostEventBodySchema) },
    responses: {
      201: json(CostEventSchema, "The recorded event"),
      ...controlErrors,
      422: controlError("agentId, issueId, projectId or heartbeatRunId is not of this company"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const sent = c.req.valid("json");
    const body = { ...sent, issueId: await issueIdIn(db, company.id, sent.issueId) };
    if (actor.type === "agent" && body.agentId !== actor.agentId)
      throw forbidden("An agent may report only its own costs");
    const { agent, projectId } = await checkCostRefs(db, company.id, body);
    await rememberOriginFrom(c, company.id);
    const row = await recordCostEvent(
      c.env,
      db,
      {
        companyId: company.id,
        agentId: agent.id,
        issueId: body.issueId ?? null,
        projectId,
        heartbeatRunId: body.heartbeatRunId ?? null,
        provider: body.provider,
        model: body.model ?? null,
        billingType: body.billingType,
        inputTokens: body.inputTokens,
        cachedInputTokens: body.cachedInputTokens,
        outputTokens: body.outputTokens,
        costCents: body.costCents,
        occurredAt: Date.parse(body.occurredAt),
      },
      refOf(actor),
    );
    sendQueuedFrom(c, company.id);
    return c.json(costEventResource(row), 201);
  },
);

/** `from`/`to` of a read-out; the default is the current UTC month. */
function rangeOf(query: { from?: string; to?: string }): CostRange {
  const month = utcMonth(Date.now());
  const range = {
    start: query.from ? Date.parse(query.from) : month.start,
    end: query.to ? Date.parse(query.to) : month.end,
  };
  if (range.start >= range.end) throw unprocessable("from must be before to");
  return range;
}

const readRoute = (path: string, summary: string, schema: z.ZodType, description: string) =>
  createRoute({
    method: "get",
    path: `/companies/{companyId}/costs/${path}`,
    tags,
    summary,
    description: `${description} Range: from (inclusive) to to (exclusive), ISO-8601; default the current UTC month. Board and the company's agents.`,
    security: controlAuth,
    request: { params: CompanyParamSchema, query: CostRangeQuerySchema },
    responses: {
      200: json(schema, "Totals"),
      ...controlErrors,
      422: controlError("from is not before to"),
    },
  });

costRoutes.openapi(
  readRoute(
    "summary",
    "The company's spend in a range against its monthly budget",
    CostSummarySchema,
    "utilizationPercent is null when the company has no budget (0).",
  ),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const range = rangeOf(c.req.valid("query"));
    const spendCents = await companySpend(db, company.id, range);
    const budgetCents = company.budgetMonthlyCents;
    return c.json(
      {
        companyId: company.id,
        spendCents,
        budgetCents,
        utilizationPercent: budgetCents > 0 ? Math.round((spendCents / budgetCents) * 10_000) / 100 : null,
        from: iso(range.start),
        to: iso(range.end),
      },
      200,
    );
  },
);

costRoutes.openapi(
  readRoute(
    "by-agent",
    "Spend and tokens per agent",
    z.array(AgentCostSchema),
    "Agents with events in the range, most expensive first.",
  ),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    return c.json(await costsByAgent(db, company.id, rangeOf(c.req.valid("query"))), 200);
  },
);

costRoutes.openapi(
  readRoute(
    "by-project",
    "Spend and tokens per project",
    z.array(ProjectCostSchema),
    "Projects with events in the range, most expensive first; events without a project are one row " +
      "with projectId null.",
  ),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    return c.json(await costsByProject(db, company.id, rangeOf(c.req.valid("query"))), 200);
  },
);

costRoutes.openapi(
  readRoute(
    "by-model",
    "Spend and tokens per provider and model",
    z.array(ModelCostSchema),
    "Provider and model pairs with events in the range, most expensive first; events without a model " +
      "are one row per provider with model null.",
  ),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    return c.json(await costsByModel(db, company.id, rangeOf(c.req.valid("query"))), 200);
  },
);

costRoutes.openapi(
  readRoute(
    "by-provider",
    "Spend and tokens per provider",
    z.array(ProviderCostSchema),
    "Providers with events in the range, most expensive first.",
  ),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    return c.json(await costsByProvider(db, company.id, rangeOf(c.req.valid("query"))), 200);
  },
);
