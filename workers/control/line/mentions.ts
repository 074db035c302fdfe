import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { issueComments, issues, type NotificationRow, notifications } from "../../db/schema";
import { actorNames } from "../shared";
import { recipientsFor } from "./directory";
import { enqueueEach, type NoticeDraft } from "./notices";
import { clip, companyName, oneLine } from "./triggers";

/**
 * Mentions and assignments on the line (issue 30, docs/company-line.md "What goes out"): the
 * notifications a write put in people's inboxes also reach their phones, as kind `mentions`. One write
 * that both assigns and mentions a person (PATCH with a comment) is one notice to them: its subject
 * is the first of their notifications in the write, so a retried trigger still queues it once.
 */

interface Written {
  notification: NotificationRow;
  identifier: string;
  title: string;
  commentBody: string | null;
}

/** The write's notifications in the company, with their issue and the mentioning comment. */
function writtenNotifications(db: Db, companyId: string, ids: string[]): Promise<Written[]> {
  return db
    .select({
      notification: notifications,
      identifier: issues.identifier,
      title: issues.title,
      commentBody: issueComments.body,
    })
    .from(notifications)
    .innerJoin(issues, and(eq(issues.id, notifications.issueId), eq(issues.companyId, companyId)))
    .leftJoin(issueComments, eq(issueComments.id, notifications.commentId))
    .where(and(eq(notifications.companyId, companyId), inArray(notifications.id, ids)))
    .orderBy(notifications.id)
    .all();
}

/** Each person's notifications of the write, never the actor's own (notify.ts drops those already). */
function byPerson(rows: Written[]): Map<string, Written[]> {
  const people = new Map<string, Written[]>();
  for (const row of rows) {
    const { userId, actorType, actorId } = row.notification;
    if (actorType === "user" && actorId === userId) continue;
    people.set(userId, [...(people.get(userId) ?? []), row]);
  }
  return people;
}

/** "Ada assigned you ENG-3 (Title) and mentioned you: "…"" — who, which issue, what they said. */
export function mentionText(company: string, actor: string, rows: Written[], origin: string): string {
  const first = rows[0] as Written;
  const assigned = rows.some((row) => row.notification.kind === "assigned");
  const mention = rows.find((row) => row.notification.kind === "mention");
  const issue = `${first.identifier} (${clip(oneLine(first.title), 80)})`;
  const what = assigned
    ? `${actor} assigned you ${issue}${mention ? " and mentioned you" : ""}`
    : `${actor} mentioned you on ${issue}`;
  const said = mention?.commentBody ? `:\n${clip(mention.commentBody.trim(), 600)}` : ".";
  return (
    `${company}: ${what}${said}\n\n` +
    `Reply to this message (quote it) to comment on ${first.identifier}. ${origin}/issues/${first.identifier}`
  );
}

/**
 * The notifications `ids` (one write's, in `companyId`) → one notice per person who chose `mentions`
 * and has a verified number, while still a member. Returns how many are new. It runs after the write's
 * answer is ready, so the common case (nobody notified is on the line) costs one query; otherwise the
 * notices go in with one insert.
 */
export async function queueNotificationNotices(
  db: Db,
  companyId: string,
  ids: string[],
  origin: string,
  now: number,
): Promise<number> {
  if (ids.length === 0) return 0;
  const recipients = await recipientsFor(db, companyId, "mentions", { notifiedBy: ids }, now);
  if (recipients.length === 0) return 0;
  const people = byPerson(await writtenNotifications(db, companyId, ids));
  const actors = [...people.values()].map((rows) => (rows[0] as Written).notification);
  const [company, names] = await Promise.all([
    companyName(db, companyId),
    actorNames(db, companyId, {
      userIds: actors.filter((row) => row.actorType === "user").map((row) => row.actorId),
      agentIds: actors.filter((row) => row.actorType === "agent").map((row) => row.actorId),
    }),
  ]);
  const notices = recipients.flatMap((recipient) => {
    const rows = people.get(recipient.userId) ?? [];
    const first = rows[0];
    if (!first) return [];
    const { actorType, actorId } = first.notification;
    const actor =
      (actorType === "user" ? names.user(actorId) : names.agent(actorId)) ??
      (actorType === "agent" ? "An agent" : "Someone");
    const draft: NoticeDraft = {
      kind: "mentions",
      subjectType: "notification",
      subjectId: first.notification.id,
      text: mentionText(company, actor, rows, origin),
    };
    return [{ recipient, draft }];
  });
  return enqueueEach(db, companyId, notices, now);
}
