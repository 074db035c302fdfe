import { and, desc, eq, inArray, isNull, lt, or, type SQL, sql } from "drizzle-orm";
import type { BoardActor } from "../../core/actor";
import type { Db } from "../../db/client";
import { companyMemberships, issues, type NotificationRow, notifications } from "../../db/schema";
import { badRequest, notFound } from "../../http/errors";
import { actorNames } from "../shared";

/**
 * The caller's own notifications, and only in companies they still belong to (a removed member's
 * rows stay unseen); a key limited to one company sees that company's only.
 */
function ownScope(actor: BoardActor): SQL {
  const conditions: SQL[] = [
    eq(notifications.userId, actor.userId),
    inArray(
      notifications.companyId,
      sql`(SELECT ${companyMemberships.companyId} FROM ${companyMemberships} WHERE ${companyMemberships.userId} = ${actor.userId})`,
    ),
  ];
  if (actor.onlyCompanyId) conditions.push(eq(notifications.companyId, actor.onlyCompanyId));
  return and(...conditions) as SQL;
}

export interface NotificationPage {
  unreadOnly: boolean;
  /** A notification's id: the page continues with older ones. */
  before?: string;
  limit: number;
}

const olderThan = (row: { createdAt: number; id: string }) =>
  or(
    lt(notifications.createdAt, row.createdAt),
    and(eq(notifications.createdAt, row.createdAt), lt(notifications.id, row.id)),
  ) as SQL;

/** Newest first, with the issue's identifier and title joined in (one query). */
export async function listNotifications(db: Db, actor: BoardActor, page: NotificationPage) {
  const conditions: SQL[] = [ownScope(actor)];
  if (page.unreadOnly) conditions.push(isNull(notifications.readAt));
  if (page.before) {
    const cursor = await db
      .select({ createdAt: notifications.createdAt, id: notifications.id })
      .from(notifications)
      .where(and(ownScope(actor), eq(notifications.id, page.before)))
      .get();
    if (!cursor) throw badRequest("before: no such notification of yours");
    conditions.push(olderThan(cursor));
  }
  return db
    .select({ notification: notifications, identifier: issues.identifier, title: issues.title })
    .from(notifications)
    .innerJoin(issues, eq(issues.id, notifications.issueId))
    .where(and(...conditions))
    .orderBy(desc(notifications.createdAt), desc(notifications.id))
    .limit(page.limit);
}

type ListedRow = Awaited<ReturnType<typeof listNotifications>>[number];

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The page as answered, actors named in one batched read per company on it. */
export async function notificationResources(db: Db, rows: readonly ListedRow[]) {
  const companies = [...new Set(rows.map((row) => row.notification.companyId))];
  const named = await Promise.all(
    companies.map(async (companyId) => {
      const own = rows
        .filter((row) => row.notification.companyId === companyId)
        .map((row) => row.notification);
      const ids = (type: string) => own.filter((row) => row.actorType === type).map((row) => row.actorId);
      return [
        companyId,
        await actorNames(db, companyId, { userIds: ids("user"), agentIds: ids("agent") }),
      ] as const;
    }),
  );
  const namesOf = new Map(named);
  return rows.map(({ notification: row, identifier, title }) => {
    const names = namesOf.get(row.companyId);
    const actorName = row.actorType === "user" ? names?.user(row.actorId) : names?.agent(row.actorId);
    return {
      id: row.id,
      companyId: row.companyId,
      kind: row.kind,
      issue: { id: row.issueId, identifier, title },
      commentId: row.commentId,
      actor: { type: row.actorType, id: row.actorId, name: actorName ?? null },
      createdAt: new Date(row.createdAt).toISOString(),
      readAt: iso(row.readAt),
    };
  });
}

export async function unreadCount(db: Db, actor: BoardActor): Promise<number> {
  const row = await db
    .select({ count: sql<number>`count(*)` })
    .from(notifications)
    .where(and(ownScope(actor), isNull(notifications.readAt)))
    .get();
  return row?.count ?? 0;
}

/** Marks one of the caller's notifications read (again is a no-op); another's is 404. */
export async function markRead(db: Db, actor: BoardActor, id: string, now: number): Promise<NotificationRow> {
  const row = await db
    .select()
    .from(notifications)
    .where(and(ownScope(actor), eq(notifications.id, id)))
    .get();
  if (!row) throw notFound("Notification not found");
  if (row.readAt !== null) return row;
  await db.update(notifications).set({ readAt: now }).where(eq(notifications.id, row.id));
  return { ...row, readAt: now };
}

/** Marks all the caller's unread notifications read; answers how many changed. */
export async function markAllRead(db: Db, actor: BoardActor, now: number): Promise<number> {
  const result = await db
    .update(notifications)
    .set({ readAt: now })
    .where(and(ownScope(actor), isNull(notifications.readAt)));
  return result.meta.changes ?? 0;
}
