import { eq, like } from "drizzle-orm";
import type { ActorRef } from "../../core/actor";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type CompanyRow, companies, companyMemberships } from "../../db/schema";
import { badRequest, conflict } from "../../http/errors";
import { basePrefix, firstFreePrefix } from "../companies";
import type { Statement } from "../issues";
import { followNewCompany } from "../runners";
import { activityInsert } from "../shared";
import { type IncludeInput, type PackageModel, resolveInclude } from "./model";
import { parsePackage } from "./parse";
import {
  buildPlan,
  type CollisionStrategy,
  type Existing,
  type ImportPlan,
  type ImportTarget,
  loadExisting,
  narrowModel,
  requiredInputs,
  yieldToExistingCeo,
} from "./plan";
import {
  agentStatements,
  goalStatements,
  type IdMaps,
  idMap,
  projectStatements,
  type RowContext,
  routineStatements,
  taskStatements,
} from "./rows";
import { finalSkillRefs, skillStatements } from "./skills";
import { loadPackageSource, type PackageSource } from "./source";

/**
 * Import: load the source, parse and validate it, plan (preview), then write the plan as ONE D1 batch
 * (apply). A new company is inserted in that same batch, so a failure leaves no partial company.
 */

export interface ImportRequest {
  source: PackageSource;
  include?: IncludeInput;
  target: ImportTarget;
  collisionStrategy?: CollisionStrategy | "replace";
}

export interface PreparedImport {
  model: PackageModel;
  plan: ImportPlan;
  target: ImportTarget;
  existing: Existing;
  warnings: string[];
  requiredInputs: ReturnType<typeof requiredInputs>;
}

function strategyOf(request: ImportRequest): CollisionStrategy {
  const strategy = request.collisionStrategy ?? "rename";
  if (strategy === "replace")
    throw badRequest(
      'collisionStrategy "replace" is refused as unsafe: it would overwrite existing entities; use "rename" or "skip"',
    );
  return strategy;
}

/** Everything preview shows and apply executes; reads only. */
export async function prepareImport(env: Env, db: Db, request: ImportRequest): Promise<PreparedImport> {
  const strategy = strategyOf(request);
  const files = await loadPackageSource(env, request.source);
  const { model: parsed, warnings } = parsePackage(files);
  const narrowed = narrowModel(parsed, resolveInclude(request.include, true), warnings);
  const target =
    request.target.mode === "new_company"
      ? { ...request.target, newCompanyName: request.target.newCompanyName || parsed.company.name }
      : request.target;
  const existing = await loadExisting(db, target);
  const yielded = yieldToExistingCeo(narrowed, existing, warnings);
  const plan = buildPlan(yielded, target, existing, strategy);
  const model = finalSkillRefs(yielded, plan.skills, existing.skills, warnings);
  return { model, plan, target, existing, warnings, requiredInputs: requiredInputs(model, plan) };
}

function idMaps(prepared: PreparedImport): IdMaps {
  const { plan, existing } = prepared;
  return {
    agents: idMap(plan.agents, existing.agents),
    goals: idMap(plan.goals, existing.goals),
    projects: idMap(plan.projects, existing.projects),
    tasks: idMap(plan.issues, existing.issues),
  };
}

async function entityStatements(ctx: RowContext, prepared: PreparedImport): Promise<Statement[]> {
  const { model, plan } = prepared;
  return [
    ...skillStatements(ctx, model, plan.skills),
    ...agentStatements(ctx, model, plan),
    ...goalStatements(ctx, model, plan),
    ...projectStatements(ctx, model, plan),
    ...(await routineStatements(ctx, model, plan)),
    ...taskStatements(ctx, model, plan),
  ];
}

function newCompanyRow(
  prepared: PreparedImport,
  name: string,
  prefix: string,
  creator: ActorRef,
  now: number,
): CompanyRow {
  const { company } = prepared.model;
  return {
    id: newId(),
    name,
    description: company.description,
    status: "active",
    issuePrefix: prefix,
    issueCounter: 0,
    brandColor: company.brandColor,
    logoAssetId: null,
    budgetMonthlyCents: company.budgetMonthlyCents,
    spentMonthlyCents: 0,
    requireBoardApprovalForNewAgents: company.requireBoardApprovalForNewAgents,
    maxConcurrentRuns: null,
    modelPrices: null,
    archivedAt: null,
    createdByUserId: creator.type === "board" ? creator.userId : null,
    createdAt: now,
    updatedAt: now,
  };
}

/** The company, copies of the source company's memberships, and its activity row. */
async function companyStatements(
  db: Db,
  row: CompanyRow,
  sourceCompanyId: string,
  actor: ActorRef,
): Promise<Statement[]> {
  const members = await db
    .select()
    .from(companyMemberships)
    .where(eq(companyMemberships.companyId, sourceCompanyId));
  return [
    db.insert(companies).values(row),
    ...members.map((member) =>
      db
        .insert(companyMemberships)
        .values({ companyId: row.id, userId: member.userId, role: member.role, createdAt: row.createdAt }),
    ),
    // Only the importing user created it: the source company's other owners' runners attach explicitly.
    ...(row.createdByUserId ? [followNewCompany(db, row.createdByUserId, row.id, row.createdAt)] : []),
    activityInsert(
      db,
      {
        companyId: row.id,
        actor,
        action: "company.created",
        entityType: "company",
        entityId: row.id,
        details: { name: row.name, issuePrefix: row.issuePrefix, source: "import" },
      },
      row.createdAt,
    ),
  ];
}

async function freePrefix(db: Db, name: string): Promise<string> {
  const base = basePrefix(name);
  const rows = await db
    .select({ prefix: companies.issuePrefix })
    .from(companies)
    .where(like(companies.issuePrefix, `${base}%`));
  return firstFreePrefix(base, new Set(rows.map((row) => row.prefix)));
}

const isPrefixCollision = (error: unknown) => {
  const text = error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error);
  return text.includes("UNIQUE constraint failed") && text.includes("issue_prefix");
};

export function createdCounts(prepared: PreparedImport) {
  const made = (entries: Array<{ action: string; slug: string }>) =>
    entries.filter((entry) => entry.action !== "skip");
  const tasks = new Set(made(prepared.plan.issues).map((entry) => entry.slug));
  const chosen = prepared.model.tasks.filter((task) => tasks.has(task.slug));
  return {
    company: prepared.plan.company.action === "create" ? 1 : 0,
    agents: made(prepared.plan.agents).length,
    goals: made(prepared.plan.goals).length,
    projects: made(prepared.plan.projects).length,
    routines: made(prepared.plan.routines).length,
    skills: made(prepared.plan.skills).length,
    issues: chosen.length,
    comments: chosen.reduce((sum, task) => sum + task.comments.length, 0),
    documents: chosen.reduce((sum, task) => sum + task.documents.length, 0),
  };
}

/** Races on a fresh company's issue prefix are retried; each round at least one racer wins. */
const PREFIX_ATTEMPTS = 10;

export async function applyImport(
  env: Env,
  db: Db,
  actor: ActorRef,
  sourceCompanyId: string,
  prepared: PreparedImport,
): Promise<string> {
  const { plan } = prepared;
  for (let attempt = 1; ; attempt++) {
    const now = Date.now();
    const company =
      plan.company.action === "create"
        ? newCompanyRow(prepared, plan.company.name, await freePrefix(db, plan.company.name), actor, now)
        : null;
    const companyId =
      company?.id ?? (prepared.target.mode === "existing_company" ? prepared.target.companyId : "");
    const ctx: RowContext = {
      db,
      companyId,
      actor,
      now,
      masterKey: env.SECRETS_MASTER_KEY,
      ids: idMaps(prepared),
    };
    const statements = [
      ...(company ? await companyStatements(db, company, sourceCompanyId, actor) : []),
      ...(await entityStatements(ctx, prepared)),
      activityInsert(
        db,
        {
          companyId,
          actor,
          action: "company.package_imported",
          entityType: "company",
          entityId: companyId,
          details: { created: createdCounts(prepared), warnings: prepared.warnings.length },
        },
        now,
      ),
    ];
    try {
      const [first, ...rest] = statements;
      if (first) await db.batch([first, ...rest]);
      return companyId;
    } catch (error) {
      if (company && isPrefixCollision(error) && attempt < PREFIX_ATTEMPTS) continue;
      if (error instanceof Error && error.message.includes("UNIQUE constraint failed"))
        throw conflict(
          "The target company changed while importing (a name was taken meanwhile); preview again",
        );
      throw error;
    }
  }
}
