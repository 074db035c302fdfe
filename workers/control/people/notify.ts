import { type ActorRef, activityActor } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type NotificationKind, notifications } from "../../db/schema";

/**
 * One notification to write: who gets it, why, about which issue (and comment), caused by whom. Its
 * id is chosen with the draft, so the caller can name the rows it wrote (the company line's notices).
 */
export interface NotificationDraft {
  id: string;
  companyId: string;
  userId: string;
  kind: NotificationKind;
  issueId: string;
  commentId?: string | null;
  actor: ActorRef;
}

/** A person is never notified of what they did themselves. */
export const notifiesSomeoneElse = (draft: NotificationDraft): boolean =>
  !(draft.actor.type === "board" && draft.actor.userId === draft.userId);

/**
 * The inserts, unexecuted, so they join the batch of the comment or assignment they record (both
 * commit or neither). Drafts addressed to their own actor are dropped.
 */
export function notificationInserts(db: Db, drafts: readonly NotificationDraft[], now: number) {
  return drafts.filter(notifiesSomeoneElse).map((draft) =>
    db.insert(notifications).values({
      id: draft.id,
      companyId: draft.companyId,
      userId: draft.userId,
      kind: draft.kind,
      issueId: draft.issueId,
      commentId: draft.commentId ?? null,
      ...activityActor(draft.actor),
      createdAt: now,
      readAt: null,
    }),
  );
}

/** Who the drafts reach (each once): the users whose open pages should hear of it. */
export const recipientsOf = (drafts: readonly NotificationDraft[]): string[] => [
  ...new Set(drafts.filter(notifiesSomeoneElse).map((draft) => draft.userId)),
];

/** The ids of the notifications the drafts write (never one to its own actor). */
export const notificationIdsOf = (drafts: readonly NotificationDraft[]): string[] =>
  drafts.filter(notifiesSomeoneElse).map((draft) => draft.id);

/** The notification for a person handed an issue: none when the assignee did not change. */
export function assignmentDraft(input: {
  companyId: string;
  issueId: string;
  previousUserId: string | null;
  nextUserId: string | null;
  actor: ActorRef;
}): NotificationDraft[] {
  if (input.nextUserId === null || input.nextUserId === input.previousUserId) return [];
  return [
    {
      id: newId(),
      companyId: input.companyId,
      userId: input.nextUserId,
      kind: "assigned",
      issueId: input.issueId,
      actor: input.actor,
    },
  ];
}
