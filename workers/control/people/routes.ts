import { createRoute } from "@hono/zod-openapi";
import { controlAuth, controlErrors, createRouter, json } from "../../http/openapi";
import { controlContext, requireBoard } from "../shared";
import {
  MarkedAllSchema,
  NotificationListQuerySchema,
  NotificationListSchema,
  NotificationParamSchema,
  NotificationSchema,
  UnreadCountSchema,
} from "./schemas";
import { listNotifications, markAllRead, markRead, notificationResources, unreadCount } from "./store";

/**
 * A board user's notification inbox: what concerns them (mentions, assignments), newest first. Only
 * the recipient sees a notification; agents have none (403).
 */
export const notificationRoutes = createRouter();
const tags = ["Notifications"];

notificationRoutes.openapi(
  createRoute({
    method: "get",
    path: "/notifications",
    tags,
    summary: "Your notifications, newest first",
    description:
      "Mentions of you (`@Your Name` in a comment) and issues assigned to you, across the companies you " +
      "belong to. Page on with `before` = the last id of a page (`nextBefore`); `unread=true` lists unread only.",
    security: controlAuth,
    request: { query: NotificationListQuerySchema },
    responses: { 200: json(NotificationListSchema, "A page of notifications"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    requireBoard(actor, "have notifications");
    const query = c.req.valid("query");
    const [rows, unread] = await Promise.all([
      listNotifications(db, actor, {
        unreadOnly: query.unread === "true",
        before: query.before,
        limit: query.limit,
      }),
      unreadCount(db, actor),
    ]);
    const items = await notificationResources(db, rows);
    const last = items.at(-1);
    return c.json(
      { items, unreadCount: unread, nextBefore: items.length === query.limit && last ? last.id : null },
      200,
    );
  },
);

notificationRoutes.openapi(
  createRoute({
    method: "get",
    path: "/notifications/unread-count",
    tags,
    summary: "How many of your notifications are unread",
    security: controlAuth,
    responses: { 200: json(UnreadCountSchema, "The count"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    requireBoard(actor, "have notifications");
    return c.json({ unreadCount: await unreadCount(db, actor) }, 200);
  },
);

notificationRoutes.openapi(
  createRoute({
    method: "post",
    path: "/notifications/{notificationId}/read",
    tags,
    summary: "Mark one of your notifications read",
    description: "Marking a read one again changes nothing. Another user's notification answers 404.",
    security: controlAuth,
    request: { params: NotificationParamSchema },
    responses: { 200: json(NotificationSchema.pick({ id: true, readAt: true }), "Marked"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    requireBoard(actor, "have notifications");
    const row = await markRead(db, actor, c.req.valid("param").notificationId, Date.now());
    return c.json({ id: row.id, readAt: new Date(row.readAt ?? Date.now()).toISOString() }, 200);
  },
);

notificationRoutes.openapi(
  createRoute({
    method: "post",
    path: "/notifications/read-all",
    tags,
    summary: "Mark all your notifications read",
    security: controlAuth,
    responses: { 200: json(MarkedAllSchema, "How many changed"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    requireBoard(actor, "have notifications");
    return c.json({ marked: await markAllRead(db, actor, Date.now()), unreadCount: 0 }, 200);
  },
);
