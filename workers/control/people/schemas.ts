import { z } from "@hono/zod-openapi";
import { ACTOR_TYPES, NOTIFICATION_KINDS } from "../../db/schema";

const Timestamp = z.string().openapi({ format: "date-time" });

export const NotificationParamSchema = z.object({
  notificationId: z
    .string()
    .max(64)
    .openapi({ param: { name: "notificationId", in: "path" } }),
});

export const NotificationListQuerySchema = z.object({
  unread: z.enum(["true", "false"]).optional().openapi({ description: "true: unread notifications only" }),
  before: z
    .string()
    .max(64)
    .optional()
    .openapi({ description: "A notification's id (a page's nextBefore): only older ones" }),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

export const NotificationSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    kind: z.enum(NOTIFICATION_KINDS).openapi({
      description: "mention: you were @-mentioned in a comment; assigned: an issue was assigned to you",
    }),
    issue: z.object({ id: z.string(), identifier: z.string(), title: z.string() }),
    commentId: z.string().nullable().openapi({ description: "The mentioning comment (mention only)" }),
    actor: z
      .object({
        type: z.enum(ACTOR_TYPES),
        id: z.string(),
        name: z.string().nullable().openapi({ description: "Display name; null when the account is gone" }),
      })
      .openapi({ description: "Who mentioned or assigned you" }),
    createdAt: Timestamp,
    readAt: Timestamp.nullable().openapi({ description: "null while unread" }),
  })
  .openapi("Notification");

export const NotificationListSchema = z
  .object({
    items: z.array(NotificationSchema),
    unreadCount: z.number().int(),
    nextBefore: z
      .string()
      .nullable()
      .openapi({ description: "Pass as `before` for the next page; null on the last" }),
  })
  .openapi("NotificationList");

export const UnreadCountSchema = z
  .object({ unreadCount: z.number().int() })
  .openapi("NotificationUnreadCount");

export const MarkedAllSchema = z
  .object({ marked: z.number().int(), unreadCount: z.number().int() })
  .openapi("NotificationsMarkedRead");
