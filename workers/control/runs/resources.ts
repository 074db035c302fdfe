import type { Db } from "../../db/client";
import type { HeartbeatRunRow } from "../../db/schema";
import { companiesWithConnectedRunner } from "../runners";
import { type ActorNames, actorNames, nameOf } from "../shared";
import { queuePositions, runResource } from "../wakes";

/** Who invoked the runs, one batched read per company among them (a page is usually one company). */
async function requesterNames(db: Db, rows: readonly HeartbeatRunRow[]): Promise<Map<string, ActorNames>> {
  const companies = [...new Set(rows.map((row) => row.companyId))];
  const named = await Promise.all(
    companies.map(async (companyId) => {
      const own = rows.filter((row) => row.companyId === companyId);
      const names = await actorNames(db, companyId, {
        userIds: own.map((row) => row.requestedByUserId),
        agentIds: own.map((row) => row.requestedByAgentId),
      });
      return [companyId, names] as const;
    }),
  );
  return new Map(named);
}

/**
 * Runs as the API shows them, each knowing whether a connected runner serves its company, and the
 * name of whoever invoked it.
 */
export async function runResources(db: Db, rows: HeartbeatRunRow[]) {
  const queued = rows.filter((row) => row.status === "queued").map((row) => row.companyId);
  const [served, names, positions] = await Promise.all([
    companiesWithConnectedRunner(db, queued),
    requesterNames(db, rows),
    queuePositions(db, rows),
  ]);
  return rows.map((row) => {
    const own = names.get(row.companyId);
    const requestedByName = own ? nameOf(own, row.requestedByUserId, row.requestedByAgentId) : null;
    return runResource(row, served.has(row.companyId), requestedByName, positions.get(row.id) ?? null);
  });
}
