import type { Db } from "../../db/client";
import type { HeartbeatRunRow } from "../../db/schema";
import { companiesWithConnectedRunner } from "../runners";
import { runResource } from "../wakes";

/** Runs as the API shows them, each knowing whether a connected runner serves its company. */
export async function runResources(db: Db, rows: HeartbeatRunRow[]) {
  const queued = rows.filter((row) => row.status === "queued").map((row) => row.companyId);
  const served = await companiesWithConnectedRunner(db, queued);
  return rows.map((row) => runResource(row, served.has(row.companyId)));
}
