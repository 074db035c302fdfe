import { and, eq } from "drizzle-orm";
import { type Actor, refOf } from "../../core/actor";
import { rememberBounded } from "../../core/bounded-map";
import type { Db } from "../../db/client";
import { issues } from "../../db/schema";
import { notFound } from "../../http/errors";
import { canAccessCompany, issueKeyCondition, UUID } from "../shared";

export interface IssueLocation {
  id: string;
  companyId: string;
}

/** Bounds memory per isolate; the oldest entries go first. */
const MAX_LOCATIONS = 50_000;

/**
 * Id or identifier → (id, company), remembered per isolate. Safe to keep without invalidation because
 * all three never change: ids are fixed, identifiers are `<immutable prefix>-<n>` assigned once, and
 * issues do not move between companies. A deleted issue still "locates", and its IssueDO then finds
 * no row, which is the same 404.
 */
const locations = new Map<string, IssueLocation>();

const normalisedKey = (key: string) => (UUID.test(key) ? key.toLowerCase() : key.toUpperCase());

const remember = (key: string, location: IssueLocation): void =>
  rememberBounded(locations, key, location, MAX_LOCATIONS);

/**
 * A just-created issue, remembered under its id and identifier: the isolate that created it is the
 * likeliest to be asked for it next (an agent creating a task and checking it out).
 */
export function rememberNewIssue(issue: { id: string; identifier: string; companyId: string }): void {
  const location = { id: issue.id, companyId: issue.companyId };
  remember(normalisedKey(issue.id), location);
  remember(normalisedKey(issue.identifier), location);
}

/**
 * Where the issue named in the path lives, if the actor may see it; otherwise the 404 an unknown
 * id gets. Agents see their company (no query once the issue is known to this isolate); board users
 * the companies they are members of (one membership read).
 */
export async function locateVisibleIssue(db: Db, actor: Actor, key: string): Promise<IssueLocation> {
  const normalised = normalisedKey(key);
  let location = locations.get(normalised);
  if (!location) {
    const scope = refOf(actor);
    const row = await db
      .select({ id: issues.id, companyId: issues.companyId })
      .from(issues)
      .where(
        scope.type === "agent"
          ? and(issueKeyCondition(key), eq(issues.companyId, scope.companyId))
          : issueKeyCondition(key),
      )
      .get();
    if (!row) throw notFound("Issue not found");
    location = row;
    remember(normalised, location);
  }
  if (!(await canAccessCompany(db, actor, location.companyId))) throw notFound("Issue not found");
  return location;
}
