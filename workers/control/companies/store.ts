import { and, asc, eq, inArray, like } from "drizzle-orm";
import { type Actor, refOf } from "../../core/actor";
import type { Db } from "../../db/client";
import { iso, newId } from "../../db/client";
import { type CompanyRow, companies, companyAssets, companyMemberships } from "../../db/schema";
import { forbidden, unprocessable } from "../../http/errors";
import { followNewCompany } from "../runners";
import { activityInsert } from "../shared";
import type { UpdateCompanyBody } from "./schemas";

/** Company rows: the resource, listing, creation (issue prefix) and the PATCH permission rules. */

export const companyResource = (row: CompanyRow) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  status: row.status,
  issuePrefix: row.issuePrefix,
  brandColor: row.brandColor,
  logoAssetId: row.logoAssetId,
  budgetMonthlyCents: row.budgetMonthlyCents,
  spentMonthlyCents: row.spentMonthlyCents,
  requireBoardApprovalForNewAgents: row.requireBoardApprovalForNewAgents,
  maxConcurrentRuns: row.maxConcurrentRuns,
  archivedAt: row.archivedAt === null ? null : iso(row.archivedAt),
  createdAt: iso(row.createdAt),
  updatedAt: iso(row.updatedAt),
});

/** A board user's companies (by membership); an agent's own company. Oldest first. */
export async function listCompanies(db: Db, actor: Actor): Promise<CompanyRow[]> {
  if (actor.type === "agent") {
    return db.select().from(companies).where(eq(companies.id, actor.companyId));
  }
  const member = db
    .select({ companyId: companyMemberships.companyId })
    .from(companyMemberships)
    .where(
      and(
        eq(companyMemberships.userId, actor.userId),
        // A key limited to one company lists that one only.
        actor.onlyCompanyId === undefined ? undefined : eq(companyMemberships.companyId, actor.onlyCompanyId),
      ),
    );
  return db
    .select()
    .from(companies)
    .where(inArray(companies.id, member))
    .orderBy(asc(companies.createdAt), asc(companies.id));
}

/** First three ASCII letters of the name, upper-cased, padded with X: "Acme Co" → ACM, "X1" → XXX. */
export function basePrefix(name: string): string {
  return name
    .replace(/[^A-Za-z]/g, "")
    .slice(0, 3)
    .toUpperCase()
    .padEnd(3, "X");
}

/** The shortest of BASE, BASEA, BASEAA, … that no company holds yet. */
export function firstFreePrefix(base: string, taken: ReadonlySet<string>): string {
  let candidate = base;
  while (taken.has(candidate)) candidate += "A";
  return candidate;
}

async function freePrefix(db: Db, base: string): Promise<string> {
  const rows = await db
    .select({ prefix: companies.issuePrefix })
    .from(companies)
    .where(like(companies.issuePrefix, `${base}%`));
  return firstFreePrefix(base, new Set(rows.map((row) => row.prefix)));
}

function isPrefixCollision(error: unknown): boolean {
  const text = error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error);
  return text.includes("UNIQUE constraint failed") && text.includes("issue_prefix");
}

/** Each round lets at least one of the racing creates win, so this bounds a burst of same-named creates. */
const PREFIX_ATTEMPTS = 25;

export interface NewCompany {
  name: string;
  description?: string | null;
  brandColor?: string | null;
  budgetMonthlyCents?: number;
  requireBoardApprovalForNewAgents?: boolean;
}

/**
 * Inserts the company, its owner membership and the activity row in one batch. Two creates may pick
 * the same free prefix at once; the UNIQUE index lets exactly one win and the other picks again.
 */
export async function createCompany(
  db: Db,
  actor: Extract<Actor, { type: "board" }>,
  input: NewCompany,
): Promise<CompanyRow> {
  const base = basePrefix(input.name);
  for (let attempt = 1; ; attempt++) {
    const now = Date.now();
    const row: CompanyRow = {
      id: newId(),
      name: input.name,
      description: input.description ?? null,
      status: "active",
      issuePrefix: await freePrefix(db, base),
      issueCounter: 0,
      brandColor: input.brandColor ?? null,
      logoAssetId: null,
      budgetMonthlyCents: input.budgetMonthlyCents ?? 0,
      spentMonthlyCents: 0,
      requireBoardApprovalForNewAgents: input.requireBoardApprovalForNewAgents ?? true,
      maxConcurrentRuns: null,
      modelPrices: null,
      archivedAt: null,
      createdByUserId: actor.userId,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await db.batch([
        db.insert(companies).values(row),
        db
          .insert(companyMemberships)
          .values({ companyId: row.id, userId: actor.userId, role: "owner", createdAt: now }),
        // The creator's allCompanies runners serve what they create (never what they join).
        followNewCompany(db, actor.userId, row.id, now),
        activityInsert(
          db,
          {
            companyId: row.id,
            actor: refOf(actor),
            action: "company.created",
            entityType: "company",
            entityId: row.id,
            details: { name: row.name, issuePrefix: row.issuePrefix },
          },
          now,
        ),
      ]);
      return row;
    } catch (error) {
      if (!isPrefixCollision(error) || attempt >= PREFIX_ATTEMPTS) throw error;
    }
  }
}

const BOARD_ONLY_FIELDS = [
  "status",
  "budgetMonthlyCents",
  "spentMonthlyCents",
  "requireBoardApprovalForNewAgents",
  "maxConcurrentRuns",
] as const;
const BRANDING_FIELDS = ["name", "description", "brandColor", "logoAssetId"] as const;
type PatchableField = (typeof BOARD_ONLY_FIELDS)[number] | (typeof BRANDING_FIELDS)[number];

/**
 * The spec's permission table: branding by board users or this company's CEO agent; status and money
 * by board users only; the issue prefix by nobody (422, whoever asks).
 */
export function authorizeCompanyPatch(actor: Actor, body: UpdateCompanyBody): void {
  if ("issuePrefix" in body) throw unprocessable("issuePrefix is immutable");
  if (actor.type === "board") return;
  const boardOnly = BOARD_ONLY_FIELDS.filter((field) => body[field] !== undefined);
  if (boardOnly.length > 0) throw forbidden(`Only board users may change ${boardOnly.join(", ")}`);
  if (actor.role !== "ceo") {
    throw forbidden("Only board users and the company's CEO agent may update the company");
  }
}

export async function assertCompanyAsset(db: Db, companyId: string, assetId: string): Promise<void> {
  const asset = await db
    .select({ id: companyAssets.id })
    .from(companyAssets)
    .where(and(eq(companyAssets.id, assetId), eq(companyAssets.companyId, companyId)))
    .get();
  if (!asset)
    throw unprocessable("logoAssetId must be an asset of this company (upload it with POST …/logo)");
}

/** The columns that actually change, with their old and new values (for the row and the activity log). */
export function companyChanges(row: CompanyRow, body: UpdateCompanyBody, now: number) {
  const patch: Partial<CompanyRow> = {};
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const field of [...BRANDING_FIELDS, ...BOARD_ONLY_FIELDS] as PatchableField[]) {
    const value = body[field];
    if (value === undefined || value === row[field]) continue;
    changes[field] = { from: row[field], to: value };
    Object.assign(patch, { [field]: value });
  }
  // archivedAt follows the status, whichever route moves it.
  if (patch.status === "archived") patch.archivedAt = now;
  else if (patch.status !== undefined) patch.archivedAt = null;
  return { patch, changes };
}
