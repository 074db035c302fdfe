import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { type Actor, refOf } from "../../core/actor";
import type { AppEnv } from "../../core/env";
import type { Db } from "../../db/client";
import type { CompanyRow } from "../../db/schema";
import { badRequest, forbidden } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { secretBindings } from "../secrets";
import { companyForActor, controlContext, requireOwner } from "../shared";
import { packTarGz } from "./archive";
import { exportModel } from "./export";
import { applyImport, createdCounts, prepareImport } from "./import";
import { type IncludeInput, IncludeSchema, resolveInclude } from "./model";
import { buildManifest, renderFiles } from "./render";
import { PackageSourceSchema } from "./source";

/** Company packages: export (JSON or .tar.gz) and import (preview, apply). */
export const packageRoutes = createRouter();
const tags = ["Company packages"];

const CompanyParamSchema = z.object({ companyId: z.string().min(1) });

const ExportBodySchema = z
  .strictObject({
    include: IncludeSchema.optional(),
    selectedFiles: z
      .array(z.string().min(1))
      .max(2000)
      .optional()
      .openapi({ description: "Only these paths of the package (each must exist in it)" }),
  })
  .openapi("PackageExportBody");

const ExportSchema = z
  .object({
    rootPath: z.string(),
    manifest: z.record(z.string(), z.unknown()),
    files: z.record(z.string(), z.string()),
  })
  .openapi("PackageExport");

const TargetSchema = z.discriminatedUnion("mode", [
  z.strictObject({ mode: z.literal("existing_company"), companyId: z.string().min(1) }),
  z.strictObject({
    mode: z.literal("new_company"),
    newCompanyName: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .openapi({ description: "Default: the package's name" }),
  }),
]);

const ImportBodySchema = z
  .strictObject({
    source: PackageSourceSchema,
    include: IncludeSchema.optional(),
    target: TargetSchema,
    collisionStrategy: z
      .enum(["rename", "skip", "replace"])
      .optional()
      .openapi({ description: 'Default "rename"; "replace" is refused (400) as unsafe' }),
  })
  .openapi("PackageImportBody");

const PlanEntrySchema = z.object({
  action: z.enum(["create", "skip", "rename"]),
  slug: z.string(),
  name: z.string(),
  as: z.string().optional(),
});
const PlanSchema = z
  .object({
    company: PlanEntrySchema,
    agents: z.array(PlanEntrySchema),
    projects: z.array(PlanEntrySchema),
    goals: z.array(PlanEntrySchema),
    issues: z.array(PlanEntrySchema),
    routines: z.array(PlanEntrySchema),
    skills: z.array(PlanEntrySchema).openapi({
      description:
        "Company skills, by canonical key (name); a rename gives a new key (as) that the imported agents use",
    }),
  })
  .openapi("PackageImportPlan");
const PreviewSchema = z
  .object({
    plan: PlanSchema,
    warnings: z.array(z.string()),
    requiredInputs: z.array(z.record(z.string(), z.unknown())),
  })
  .openapi("PackageImportPreview");
const ApplySchema = z
  .object({
    companyId: z.string(),
    created: z.record(z.string(), z.number()),
    plan: PlanSchema,
    warnings: z.array(z.string()),
    requiredInputs: z.array(z.record(z.string(), z.unknown())),
  })
  .openapi("PackageImportResult");

/** Board members of the company, or its CEO agent; other agents of the company 403, strangers 404. */
async function packageCompany(db: Db, actor: Actor, companyId: string): Promise<CompanyRow> {
  const company = await companyForActor(db, actor, companyId);
  if (actor.type === "agent" && actor.role !== "ceo")
    throw forbidden("Only board users and the company's CEO agent may export or import packages");
  return company;
}

async function buildExport(
  db: Db,
  company: CompanyRow,
  body: { include?: IncludeInput; selectedFiles?: string[] },
  issuesDefault: boolean,
) {
  const include = resolveInclude(body.include, issuesDefault);
  const model = await exportModel(db, company, include);
  const all = renderFiles(model);
  const files = body.selectedFiles ? selectFiles(all, body.selectedFiles) : all;
  const rootPath = model.company.slug;
  return { rootPath, manifest: buildManifest(model, files, rootPath, include), files };
}

function selectFiles(all: Record<string, string>, selected: string[]): Record<string, string> {
  const missing = selected.filter((path) => all[path] === undefined);
  if (missing.length > 0)
    throw badRequest(`selectedFiles: not in the package: ${missing.join(", ")}`, { missing });
  return Object.fromEntries(selected.map((path) => [path, all[path] ?? ""]));
}

const wantsArchive = (c: Context<AppEnv>) =>
  c.req.query("format") === "tar.gz" || (c.req.header("accept") ?? "").includes("application/gzip");

packageRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/exports/preview",
    tags,
    summary: "Preview a company package (issues excluded unless include.issues)",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(ExportBodySchema) },
    responses: { 200: json(ExportSchema, "The package: rootPath, manifest, files"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await packageCompany(db, actor, c.req.valid("param").companyId);
    return c.json(await buildExport(db, company, c.req.valid("json"), false), 200);
  },
);

packageRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/exports",
    tags,
    summary: "Export a company package as JSON, or as .tar.gz (Accept: application/gzip or ?format=tar.gz)",
    description: "Secret values are never exported: manifest.envInputs lists what a receiver must supply.",
    security: controlAuth,
    request: {
      params: CompanyParamSchema,
      query: z.object({ format: z.enum(["json", "tar.gz"]).optional() }),
      ...jsonBody(ExportBodySchema),
    },
    responses: {
      200: {
        content: {
          "application/json": { schema: ExportSchema },
          "application/gzip": { schema: z.string().openapi({ format: "binary" }) },
        },
        description: "The package",
      },
      ...controlErrors,
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await packageCompany(db, actor, c.req.valid("param").companyId);
    const exported = await buildExport(db, company, c.req.valid("json"), true);
    if (!wantsArchive(c)) return c.json(exported, 200);
    const bytes = await packTarGz(exported.files, exported.rootPath);
    return c.body(bytes.slice().buffer, 200, {
      "Content-Type": "application/gzip",
      "Content-Disposition": `attachment; filename="${exported.rootPath}.tar.gz"`,
    });
  },
);

async function preparedFor(c: Context<AppEnv>, companyId: string, body: z.infer<typeof ImportBodySchema>) {
  const { actor, db } = controlContext(c);
  await packageCompany(db, actor, companyId);
  if (body.target.mode === "existing_company") await packageCompany(db, actor, body.target.companyId);
  const target =
    body.target.mode === "new_company"
      ? { mode: "new_company" as const, newCompanyName: body.target.newCompanyName ?? "" }
      : body.target;
  const prepared = await prepareImport(c.env, db, { ...body, target });
  if (actor.type === "agent") refuseSecretBindings(prepared.model.agents);
  await requireOwnerForCeo(
    db,
    actor,
    body.target.mode === "existing_company" ? body.target.companyId : companyId,
    prepared.model.agents,
  );
  return { actor, db, prepared };
}

/**
 * A package that brings the company its CEO decides what the CEO runs, and the CEO makes owner-only
 * edits: among board users only an owner imports one (issue 25, as for PATCHing the CEO's adapter).
 * A new company takes the memberships of the one in the path, so its owners are that company's.
 */
async function requireOwnerForCeo(
  db: Db,
  actor: Actor,
  governingCompanyId: string,
  agents: ReadonlyArray<{ role: string }>,
): Promise<void> {
  if (actor.type !== "board" || !agents.some((agent) => agent.role === "ceo")) return;
  await requireOwner(db, actor, governingCompanyId, "import a package that brings the company its CEO agent");
}

/** Agents never bind company secrets (../agents/secret-bindings.ts), through a package neither. */
function refuseSecretBindings(
  agents: ReadonlyArray<{ slug: string; adapterConfig: Record<string, unknown> }>,
) {
  const binding = agents.filter((agent) => secretBindings(agent.adapterConfig.env).size > 0);
  if (binding.length > 0)
    throw forbidden(
      "Only board users bind company secrets to agents: the package's agents " +
        `${binding.map((agent) => agent.slug).join(", ")} have secret references in adapterConfig.env`,
    );
}

packageRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/imports/preview",
    tags,
    summary: "What importing a package would do (nothing is written)",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(ImportBodySchema) },
    responses: { 200: json(PreviewSchema, "The plan, warnings and inputs to supply"), ...controlErrors },
  }),
  async (c) => {
    const { prepared } = await preparedFor(c, c.req.valid("param").companyId, c.req.valid("json"));
    return c.json(
      { plan: prepared.plan, warnings: prepared.warnings, requiredInputs: prepared.requiredInputs },
      200,
    );
  },
);

packageRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/imports/apply",
    tags,
    summary: "Import a package: exactly the preview's plan, all or nothing",
    description:
      "new_company creates the company in the same batch and copies the memberships of the company in the path.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(ImportBodySchema) },
    responses: {
      201: json(ApplySchema, "Imported"),
      ...controlErrors,
      // The import is one D1 batch: a write the database refuses rolls all of it back.
      500: controlError("The database refused a write; the batch was rolled back and nothing was imported"),
    },
  }),
  async (c) => {
    const sourceId = c.req.valid("param").companyId;
    const { actor, db, prepared } = await preparedFor(c, sourceId, c.req.valid("json"));
    const companyId = await applyImport(c.env, db, refOf(actor), sourceId, prepared);
    const { plan, warnings, requiredInputs } = prepared;
    return c.json({ companyId, created: createdCounts(prepared), plan, warnings, requiredInputs }, 201);
  },
);
