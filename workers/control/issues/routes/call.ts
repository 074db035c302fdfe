import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { CredentialUnconfirmed } from "../../../auth/credential-guard";
import type { AppEnv } from "../../../core/env";
import { ApiError, titleOf } from "../../../http/errors";
import { announceFrom, queueNotificationNotices } from "../../line";
import { issuesClosed, runsQueued } from "../../wakes";
import type { IssueLocation } from "../locator";
import { issueObject } from "../object";
import type { IssueOperation } from "../operations";

/**
 * Runs a mutation in the issue's IssueDO and answers with its outcome. Call it only after the
 * caller was shown to see the issue: the DO is named by a server-side id, never by client input.
 */
export async function mutateIssue(
  c: Context<AppEnv>,
  issue: IssueLocation,
  op: IssueOperation,
): Promise<Response> {
  const outcome = await issueObject(c.env, issue).apply(issue, op);
  if (!outcome.ok) {
    if (outcome.status === 401) throw new CredentialUnconfirmed();
    const status = outcome.status as ContentfulStatusCode;
    const details: unknown = outcome.detailsJson === undefined ? undefined : JSON.parse(outcome.detailsJson);
    throw new ApiError(status, titleOf(status), outcome.error, details);
  }
  if (outcome.queuedRuns) c.executionCtx.waitUntil(runsQueued(c.env, new URL(c.req.url).origin));
  if (closesIssue(op)) c.executionCtx.waitUntil(issuesClosed(c.env));
  if (outcome.notifications) await notifyOnLine(c, outcome.notifications);
  return c.body(outcome.json, outcome.status, { "content-type": "application/json" });
}

/** Mentions and assignments the operation wrote reach their people's phones too (control/line). */
export const notifyOnLine = (c: Context<AppEnv>, written: { companyId: string; ids: string[] }) =>
  announceFrom(c, written.companyId, (tx, origin, at) =>
    queueNotificationNotices(tx, written.companyId, written.ids, origin, at),
  );

/** The operation set the issue done or cancelled: runners may remove its worktree. */
const closesIssue = (op: IssueOperation): boolean =>
  op.kind === "update" && (op.input.status === "done" || op.input.status === "cancelled");

/**
 * A body an IssueDO already rendered as exactly the JSON the route declares (issueResource and
 * friends). The typed handler signature cannot see through a plain Response; this asserts it.
 */
export const renderedJson = (c: Context<AppEnv>, json: string): never =>
  c.body(json, 200, { "content-type": "application/json" }) as never;
