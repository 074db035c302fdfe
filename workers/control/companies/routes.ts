import { createRoute, z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { refOf } from "../../core/actor";
import { companies } from "../../db/schema";
import { notFound } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { settleIncidents } from "../budgets";
import {
  activityInsert,
  companyForActor,
  controlContext,
  requireBoard,
  requireOwner,
  requireOwnerAuthority,
} from "../shared";
import { companyDashboardRoutes } from "./dashboard";
import { companyLogoRoutes } from "./logo";
import {
  CompanyParamSchema,
  CompanySchema,
  CreateCompanyBodySchema,
  UpdateCompanyBodySchema,
} from "./schemas";
import {
  assertCompanyAsset,
  authorizeCompanyPatch,
  companyChanges,
  companyResource,
  createCompany,
  listCompanies,
} from "./store";

/** Companies: list, create, read, update (spec permission table), archive. Logo and dashboard are mounted below. */
export const companyRoutes = createRouter();
const tags = ["Companies"];

companyRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies",
    tags,
    summary: "Companies the caller belongs to (a board user's memberships; an agent's own company)",
    security: controlAuth,
    responses: { 200: json(z.array(CompanySchema), "Companies, oldest first"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    return c.json((await listCompanies(db, actor)).map(companyResource), 200);
  },
);

companyRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies",
    tags,
    summary: "Create a company (board users only); the creator becomes its owner",
    description:
      "The issue prefix is the first three letters of the name, upper-cased (`Acme Co` → `ACM`); when taken, " +
      "`A`s are appended (`ACMA`, `ACMAA`, …). It never changes afterwards.",
    security: controlAuth,
    request: jsonBody(CreateCompanyBodySchema),
    responses: { 201: json(CompanySchema, "Created"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    requireBoard(actor, "create companies");
    const row = await createCompany(db, actor, c.req.valid("json"));
    return c.json(companyResource(row), 201);
  },
);

companyRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}",
    tags,
    summary: "One company (name, description, budget, branding)",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(CompanySchema, "The company"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const row = await companyForActor(db, actor, c.req.valid("param").companyId);
    return c.json(companyResource(row), 200);
  },
);

companyRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/companies/{companyId}",
    tags,
    summary: "Update a company",
    description:
      "name, description, brandColor and logoAssetId: the company's owners or its CEO agent (with a key " +
      "the platform, the agent or a current owner minted). status, " +
      "budgetMonthlyCents, spentMonthlyCents, requireBoardApprovalForNewAgents and maxConcurrentRuns: owners only (403; " +
      "members and viewers 403 too). " +
      "issuePrefix: nobody (422).",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(UpdateCompanyBodySchema) },
    responses: {
      200: json(CompanySchema, "Updated"),
      ...controlErrors,
      422: controlError("issuePrefix sent, or logoAssetId not an asset of this company"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const row = await companyForActor(db, actor, c.req.valid("param").companyId);
    const body = c.req.valid("json");
    authorizeCompanyPatch(actor, body);
    await requireOwnerAuthority(db, actor, row.id, "change the company's settings");
    if (body.logoAssetId) await assertCompanyAsset(db, row.id, body.logoAssetId);
    const now = Date.now();
    const { patch, changes } = companyChanges(row, body, now);
    const changedKeys = Object.keys(changes);
    if (changedKeys.length === 0) return c.json(companyResource(row), 200);
    const [, [updated]] = await db.batch([
      activityInsert(
        db,
        {
          companyId: row.id,
          actor: refOf(actor),
          action: "company.updated",
          entityType: "company",
          entityId: row.id,
          details: { changedKeys, changes },
        },
        now,
      ),
      db
        .update(companies)
        .set({ ...patch, updatedAt: now })
        .where(eq(companies.id, row.id))
        .returning(),
      settleIncidents(
        db,
        { companyId: row.id, scope: "company", scopeId: row.id, window: "month" },
        {
          amountCents: patch.budgetMonthlyCents ?? row.budgetMonthlyCents,
          spentCents: patch.spentMonthlyCents ?? row.spentMonthlyCents,
        },
        actor.type === "board" ? actor.userId : null,
        now,
      ),
    ]);
    if (!updated) throw notFound("Company not found");
    return c.json(companyResource(updated), 200);
  },
);

companyRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/archive",
    tags,
    summary: "Archive a company (owners only; idempotent)",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(CompanySchema, "Archived"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const row = await companyForActor(db, actor, c.req.valid("param").companyId);
    requireBoard(actor, "archive a company");
    await requireOwner(db, actor, row.id, "archive the company");
    if (row.status === "archived") return c.json(companyResource(row), 200);
    const now = Date.now();
    const [, [updated]] = await db.batch([
      activityInsert(
        db,
        {
          companyId: row.id,
          actor: refOf(actor),
          action: "company.archived",
          entityType: "company",
          entityId: row.id,
          details: { previousStatus: row.status },
        },
        now,
      ),
      db
        .update(companies)
        .set({ status: "archived", archivedAt: now, updatedAt: now })
        .where(eq(companies.id, row.id))
        .returning(),
    ]);
    if (!updated) throw notFound("Company not found");
    return c.json(companyResource(updated), 200);
  },
);

companyRoutes.route("/", companyLogoRoutes);
companyRoutes.route("/", companyDashboardRoutes);
