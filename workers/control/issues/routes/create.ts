import { createRoute } from "@hono/zod-openapi";
import { guardedBy, unlessGuardRefused } from "../../../auth/credential-guard";
import { withCredentialGuard } from "../../../auth/middleware";
import { type ActorRef, type CredentialGuard, refOf } from "../../../core/actor";
import type { Db } from "../../../db/client";
import { newId } from "../../../db/client";
import { type IssueStatus, issueLabels } from "../../../db/schema";
import { conflictOnDuplicate, notFound, unprocessable } from "../../../http/errors";
import {
  controlAuth,
  controlError,
  controlErrors,
  createRouter,
  json,
  jsonBody,
} from "../../../http/openapi";
import { announceNotifications, nudgeCompanyFeed } from "../../live";
import { assignmentDraft, notificationIdsOf, notificationInserts, recipientsOf } from "../../people";
import { activityInsert, canAccessCompany, controlContext } from "../../shared";
import { assignmentWake, runsQueued, wakeInsert } from "../../wakes";
import { blockerStatements, checkBlockers } from "../blockers";
import { type NewIssue, numberedIssueReturning } from "../create";
import { rememberNewIssue } from "../locator";
import { checkReferences, withIssueIds } from "../refs";
import { issueResource } from "../resource";
import {
  CompanyIssuesParamSchema,
  type CreateIssueBody,
  CreateIssueBodySchema,
  IssueWithLabelsSchema,
} from "../schemas";
import type { Statement } from "../store";
import { notifyOnLine } from "./call";

export const issueCreateRoutes = createRouter();

/** Where a new issue may start; in_progress and later are reached by moving it (checkout first). */
const INITIAL_STATUSES: readonly IssueStatus[] = ["backlog", "todo"];

function initialStatus(body: CreateIssueBody): IssueStatus {
  const assigned = Boolean(body.assigneeAgentId || body.assigneeUserId);
  const status = body.status ?? (assigned ? "todo" : "backlog");
  if (!INITIAL_STATUSES.includes(status))
    throw unprocessable(
      `status: a new issue starts in backlog or todo, not ${status}${status === "in_progress" ? " (use checkout to start it)" : ""}`,
      { field: "status", allowed: INITIAL_STATUSES },
    );
  return status;
}

async function insertIssue(db: Db, issue: NewIssue & { actor: ActorRef }, guard: CredentialGuard | null) {
  const { id, company, body, now } = issue;
  const labelIds = [...new Set(body.labelIds ?? [])];
  const blockedByIssueIds = [...new Set(body.blockedByIssueIds ?? [])];
  const statements: Statement[] = blockerStatements(
    db,
    { id, companyId: company.id },
    blockedByIssueIds,
    now,
    false,
  );
  if (labelIds.length > 0)
    statements.push(
      db
        .insert(issueLabels)
        .values(labelIds.map((labelId) => ({ issueId: id, labelId, companyId: company.id }))),
    );
  statements.push(
    activityInsert(
      db,
      {
        companyId: company.id,
        actor: issue.actor,
        action: "issue.created",
        entityType: "issue",
        entityId: id,
        details: {
          title: body.title,
          status: issue.status,
          priority: body.priority ?? "medium",
          assigneeAgentId: body.assigneeAgentId ?? null,
          assigneeUserId: body.assigneeUserId ?? null,
          parentId: body.parentId ?? null,
        },
      },
      now,
    ),
  );
  const assigned = await assignmentWake(db, {
    issueId: id,
    companyId: company.id,
    agentId: body.assigneeAgentId ?? null,
    previousAgentId: null,
    status: issue.status,
    actor: issue.actor,
    now,
  });
  if (assigned) statements.push(wakeInsert(db, assigned));
  const handedOver = assignmentDraft({
    companyId: company.id,
    issueId: id,
    previousUserId: null,
    nextUserId: body.assigneeUserId ?? null,
    actor: issue.actor,
  });
  statements.push(...notificationInserts(db, handedOver, now));
  // The insert answers the row as committed (number, identifier): no read of it after.
  const [bump, insert] = numberedIssueReturning(db, issue);
  const [, [row]] = await unlessGuardRefused(
    conflictOnDuplicate(
      db.batch([bump, insert, ...statements, ...guardedBy(db, guard)]),
      "The company's issue counter collided with an existing identifier; retry",
    ),
  );
  if (!row) throw notFound("Company not found");
  return {
    row,
    labelIds,
    blockedByIssueIds,
    queuedRuns: assigned?.status === "queued",
    notifiedUserIds: recipientsOf(handedOver),
    notificationIds: notificationIdsOf(handedOver),
  };
}

issueCreateRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/issues",
    tags: ["Issues"],
    summary: "Create an issue",
    description:
      "Numbered `<PREFIX>-<n>` from the company's counter. Status defaults to todo when an assignee is " +
      "given, else backlog; only backlog and todo are accepted (in_progress is reached by checkout). Every " +
      "referenced id (parent, project, goal, assignee, labels, blockedByIssueIds) must belong to the company, and an assignee " +
      "agent must not be pending_approval or terminated (422 naming the field).",
    security: controlAuth,
    request: { params: CompanyIssuesParamSchema, ...jsonBody(CreateIssueBodySchema) },
    responses: {
      201: json(IssueWithLabelsSchema, "Created"),
      ...controlErrors,
      422: controlError(
        "A referenced id is not in the company, an unassignable agent, two assignees, or a status other than backlog/todo",
      ),
    },
  }),
  async (c) => {
    // Only the id is needed: the numbered insert reads the company itself, in the batch.
    const company = { id: c.req.valid("param").companyId };
    const created = await withCredentialGuard(c, async (guard) => {
      const { actor, db } = controlContext(c);
      if (!(await canAccessCompany(db, actor, company.id))) throw notFound("Company not found");
      const body = await withIssueIds(db, company.id, c.req.valid("json"));
      const status = initialStatus(body);
      await checkReferences(db, company.id, body);
      await checkBlockers(db, company.id, body.blockedByIssueIds ?? []);
      const issue = { id: newId(), company, body, status, actor: refOf(actor), now: Date.now() };
      return insertIssue(db, issue, guard);
    });
    rememberNewIssue(created.row);
    c.executionCtx.waitUntil(nudgeCompanyFeed(c.env, company.id));
    if (created.queuedRuns) c.executionCtx.waitUntil(runsQueued(c.env, new URL(c.req.url).origin));
    if (created.notifiedUserIds.length > 0)
      c.executionCtx.waitUntil(announceNotifications(c.env, company.id, created.notifiedUserIds));
    if (created.notificationIds.length > 0)
      await notifyOnLine(c, { companyId: company.id, ids: created.notificationIds });
    const { labelIds, blockedByIssueIds } = created;
    return c.json({ ...issueResource(created.row), labelIds, blockedByIssueIds }, 201);
  },
);
