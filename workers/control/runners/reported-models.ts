import { and, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { runners } from "../../db/schema";
import { isConnected, servesCompany } from "./store";

/** The part of a runner's hello (stored as its capabilities) that names the models of its CLIs. */
interface ReportedCli {
  adapterType?: unknown;
  models?: unknown;
}

const modelsIn = (capabilities: unknown, adapterType: string): string[] => {
  const clis = (capabilities as { clis?: unknown } | null)?.clis;
  if (!Array.isArray(clis)) return [];
  return (clis as ReportedCli[])
    .filter((cli) => cli.adapterType === adapterType && Array.isArray(cli.models))
    .flatMap((cli) => (cli.models as unknown[]).filter((id): id is string => typeof id === "string"));
};

/**
 * The models the CLIs of `adapterType` list on the runners connected for the company right now (what
 * they said in their hello), in the order the first runner gave them, without repeats. Empty when no
 * connected runner reported any: the caller then offers its static catalogue.
 */
export async function reportedModels(db: Db, companyId: string, adapterType: string): Promise<string[]> {
  const now = Date.now();
  const rows = await db
    .select()
    .from(runners)
    .where(and(isNull(runners.revokedAt), sql`${runners.connectedAt} IS NOT NULL`, servesCompany(companyId)))
    .orderBy(runners.createdAt);
  const models = rows
    .filter((row) => isConnected(row, now))
    .flatMap((row) => modelsIn(row.capabilities, adapterType));
  return [...new Set(models)];
}
