import { Hono } from "hono";
import type { z } from "zod";
import type { NotificationListSchema } from "../../control/people";
import { Avatar } from "../ui/board-shared";
import { ActionButton, EmptyState, Time } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { redirectWithFlash, render } from "../ui/render";

type NotificationList = z.infer<typeof NotificationListSchema>;
type Notification = NotificationList["items"][number];

/**
 * The signed-in person's notifications (mentions of them, issues assigned to them), newest first, in
 * every company they belong to; unread ones marked, each readable by a button, all at once by another.
 * The header's Inbox link shows the unread count (the page script keeps it current).
 */
export const notificationsPage = new Hono<DashboardEnv>();

function what(item: Notification): string {
  const who = item.actor.name ?? (item.actor.type === "agent" ? "An agent" : "A former member");
  return item.kind === "mention" ? `${who} mentioned you on` : `${who} assigned you`;
}

function Item({ item, csrf }: { item: Notification; csrf: string }) {
  const who = item.actor.name ?? "?";
  return (
    <li class={item.readAt ? "card" : "card unread"}>
      <p>
        <Avatar name={who} /> {what(item)}{" "}
        <a href={`/issues/${item.issue.id}`}>
          {item.issue.identifier} {item.issue.title}
        </a>
      </p>
      <p class="muted">
        <Time value={item.createdAt} />
        {item.readAt ? "" : " · unread"}
      </p>
      {!item.readAt && (
        <ActionButton
          action={`/notifications/${item.id}/read`}
          csrf={csrf}
          label="Mark read"
          name={`Mark read: ${item.issue.identifier}`}
          variant="secondary"
        />
      )}
    </li>
  );
}

notificationsPage.get("/notifications", async (c) => {
  const list = await c.var.api.get<NotificationList>("/api/notifications?limit=100");
  return render(c, {
    title: `Inbox (${list.unreadCount} unread)`,
    section: "inbox",
    children: (
      <>
        {list.unreadCount > 0 && (
          <ActionButton action="/notifications/read-all" csrf={c.var.csrf} label="Mark all read" />
        )}
        {list.items.length === 0 ? (
          <EmptyState>
            Nothing yet: you are told here when someone mentions you or gives you an issue.
          </EmptyState>
        ) : (
          <ol class="comments">
            {list.items.map((item) => (
              <Item item={item} csrf={c.var.csrf} />
            ))}
          </ol>
        )}
      </>
    ),
  });
});

notificationsPage.post("/notifications/read-all", async (c) => {
  await c.var.api.send("POST", "/api/notifications/read-all");
  return redirectWithFlash(c, "/notifications", "All marked read");
});

notificationsPage.post("/notifications/:id/read", async (c) => {
  const result = await c.var.api.send(
    "POST",
    `/api/notifications/${encodeURIComponent(c.req.param("id"))}/read`,
  );
  return redirectWithFlash(c, "/notifications", result.ok ? "Marked read" : result.error);
});
