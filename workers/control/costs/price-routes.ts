import { createRoute, z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { refOf } from "../../core/actor";
import { companies } from "../../db/schema";
import { controlAuth, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { activityInsert, companyForActor, controlContext, requireOwner } from "../shared";

/**
 * The company's price table per provider: what a run's tokens cost when the agent set no prices of
 * its own (adapterConfig.pricing) — for a provider of the company's own, or a negotiated rate. The
 * runner gets it with every run (RunAssignment.modelPrices); entries win over the CLI's own cost.
 */
export const modelPriceRoutes = createRouter();
const tags = ["Costs"];

const PROVIDERS_MAX = 50;
const MODELS_MAX = 200;

const PriceSchema = z
  .strictObject({
    input: z.number().min(0).max(100_000),
    cachedInput: z.number().min(0).max(100_000).optional(),
    output: z.number().min(0).max(100_000),
  })
  .openapi("ModelPrice", { description: "USD per million tokens; cachedInput defaults to input" });

const PriceTableSchema = z
  .record(
    z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
    z
      .record(z.string().min(1).max(200), PriceSchema)
      .refine(
        (models) => Object.keys(models).length <= MODELS_MAX,
        `at most ${MODELS_MAX} models a provider`,
      ),
  )
  .refine((providers) => Object.keys(providers).length <= PROVIDERS_MAX, `at most ${PROVIDERS_MAX} providers`)
  .openapi({
    description:
      "provider (as the run reports it: openai, anthropic, google, or OpenCode's provider id) → model, " +
      "or `*` for the provider's other models → prices",
    example: {
      ollama: { "*": { input: 0, output: 0 } },
      openai: { "gpt-5-mini": { input: 0.2, output: 1.6 } },
    },
  });

const ModelPricesSchema = z
  .object({ companyId: z.string(), prices: PriceTableSchema })
  .openapi("ModelPrices");

const Params = z.object({ companyId: z.string() });

modelPriceRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/model-prices",
    tags,
    summary: "The company's prices per provider and model (board and the company's agents)",
    security: controlAuth,
    request: { params: Params },
    responses: { 200: json(ModelPricesSchema, "The price table ({} when none is set)"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    return c.json({ companyId: company.id, prices: company.modelPrices ?? {} }, 200);
  },
);

modelPriceRoutes.openapi(
  createRoute({
    method: "put",
    path: "/companies/{companyId}/model-prices",
    tags,
    summary: "Replace the company's prices per provider and model (owners)",
    description:
      "A run is priced with its agent's adapterConfig.pricing, else this table's entry for its provider " +
      "and model, else the provider's `*`, else the CLI's own cost or the runner's table. Applies to runs " +
      "that start after the change. `{}` clears it.",
    security: controlAuth,
    request: { params: Params, ...jsonBody(z.strictObject({ prices: PriceTableSchema })) },
    responses: { 200: json(ModelPricesSchema, "The table as stored"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    await requireOwner(db, actor, company.id, "set the company's model prices");
    const { prices } = c.req.valid("json");
    const now = Date.now();
    await db.batch([
      db
        .update(companies)
        .set({ modelPrices: Object.keys(prices).length > 0 ? prices : null, updatedAt: now })
        .where(eq(companies.id, company.id)),
      activityInsert(
        db,
        {
          companyId: company.id,
          actor: refOf(actor),
          action: "company.model_prices_updated",
          entityType: "company",
          entityId: company.id,
          details: { providers: Object.keys(prices) },
        },
        now,
      ),
    ]);
    return c.json({ companyId: company.id, prices }, 200);
  },
);
