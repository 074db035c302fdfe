import { and, eq } from "drizzle-orm";
import { type Actor, refOf } from "../../core/actor";
import type { Db } from "../../db/client";
import { issues } from "../../db/schema";
import { notFound } from "../../http/errors";
import {
  canAccessCompany,
  type IssueLocation,
  issueKeyCondition,
  knownIssueLocation,
  rememberIssueLocation,
} from "../shared";

export type { IssueLocation };

/**
 * A just-created issue, remembered under its id and identifier: the isolate that created it is the
 * likeliest to be asked for it next (an agent creating a task and checking it out).
 */
export function rememberNewIssue(issue: { id: string; identifier: string; companyId: string }): void {
  const location = { id: issue.id, companyId: issue.companyId };
  rememberIssueLocation(issue.id, location);
  rememberIssueLocation(issue.identifier, location);
}

/**
 * Where the issue named in the path lives, if the actor may see it; otherwise the 404 an unknown
 * id gets. Agents see their company (no query once the issue is known to this isolate); board users
 * the companies they are members of (one membership read).
 */
export async function locateVisibleIssue(db: Db, actor: Actor, key: string): Promise<IssueLocation> {
  let location = knownIssueLocation(key);
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
    rememberIssueLocation(key, location);
  }
  if (!(await canAccessCompany(db, actor, location.companyId))) throw notFound("Issue not found");
  return location;
}
