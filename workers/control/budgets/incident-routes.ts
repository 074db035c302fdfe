import { createRoute, z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { refOf } from "../../core/actor";
import { budgetIncidents } from "../../db/schema";
import { conflict, notFound, unprocessable } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { rememberOriginFrom, sendQueuedFrom } from "../line";
import { companyForActor, controlContext, requireOwner } from "../shared";
import { listIncidents } from "./incidents";
import {
  CompanyParamSchema,
  IncidentQuerySchema,
  IncidentSchema,
  incidentResource,
  ResolveBodySchema,
} from "./schemas";
import { currentSpend, setBudget } from "./settings";

/** Budget incidents: listed for the board and the company's agents, resolved by the owners. */
export const budgetIncidentRoutes = createRouter();
const tags = ["Costs"];

budgetIncidentRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/budget-incidents",
    tags,
    summary: "Budget incidents, newest first (board and the company's agents)",
    description:
      "A soft incident: a budget's spend passed its warnPercent; a hard one: it reached the amount, " +
      "and while it is open no run the budget covers starts. At most 500.",
    security: controlAuth,
    request: { params: CompanyParamSchema, query: IncidentQuerySchema },
    responses: { 200: json(z.array(IncidentSchema), "Incidents"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const rows = await listIncidents(db, company.id, c.req.valid("query").status);
    return c.json(rows.map(incidentResource), 200);
  },
);

budgetIncidentRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/budget-incidents/{incidentId}/resolve",
    tags,
    summary: "Resolve a budget incident: raise the budget and resume, or dismiss a warning (owners)",
    description:
      "`raise_budget_and_resume` sets the budget to amountCents (above the spend: 422 otherwise), which " +
      "resolves the incident (`raised`), frees the runs it held and resumes an agent paused for its " +
      "budget. `dismiss` acknowledges a soft incident; a hard one cannot be dismissed (422). An incident " +
      "already resolved is a 409.",
    security: controlAuth,
    request: {
      params: CompanyParamSchema.extend({ incidentId: z.string().min(1).max(64) }),
      ...jsonBody(ResolveBodySchema),
    },
    responses: {
      200: json(IncidentSchema, "The resolved incident"),
      ...controlErrors,
      409: controlError("The incident is already resolved"),
      422: controlError("A hard incident dismissed, or an amount not above the spend"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { companyId, incidentId } = c.req.valid("param");
    const company = await companyForActor(db, actor, companyId);
    await requireOwner(db, actor, company.id, "resolve budget incidents");
    const where = and(eq(budgetIncidents.id, incidentId), eq(budgetIncidents.companyId, company.id));
    const incident = await db.select().from(budgetIncidents).where(where).get();
    if (!incident) throw notFound("Budget incident not found");
    if (incident.status !== "open") throw conflict("The incident is already resolved");
    const body = c.req.valid("json");
    const now = Date.now();
    const userId = actor.type === "board" ? actor.userId : null;
    if (body.action === "dismiss") {
      if (incident.threshold === "hard")
        throw unprocessable("A hard incident is resolved by raising the budget");
      await db
        .update(budgetIncidents)
        .set({ status: "resolved", resolution: "dismissed", resolvedByUserId: userId, resolvedAt: now })
        .where(and(where, eq(budgetIncidents.status, "open")));
    } else {
      const key = {
        companyId: company.id,
        scope: incident.scopeType,
        scopeId: incident.scopeId,
        window: incident.window,
      };
      const spent = await currentSpend(db, key, now);
      if (spent >= body.amountCents)
        throw unprocessable(`amountCents must be above the spend (${spent} cents)`);
      await rememberOriginFrom(c, company.id);
      await setBudget(c.env, db, key, body.amountCents, { actor: refOf(actor), userId, resume: true }, now);
      // A warning still reached at the new amount is a new incident; this one is answered all the same.
      await db
        .update(budgetIncidents)
        .set({ status: "resolved", resolution: "raised", resolvedByUserId: userId, resolvedAt: now })
        .where(and(where, eq(budgetIncidents.status, "open")));
      sendQueuedFrom(c, company.id);
    }
    const resolved = await db.select().from(budgetIncidents).where(where).get();
    return c.json(incidentResource(resolved ?? incident), 200);
  },
);
