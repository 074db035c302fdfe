import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { MAX_EVENTS_PAGE } from "../../../durable-objects/messaging/events/log";
import type { AppEnv } from "../../core/env";
import type { SessionRow } from "../../db/schema";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { errorResponse } from "../../http/openapi";
import { callSession } from "./call";

/**
 * A session's events from a cursor (issue 33): the session's webhook outbox read in order, so a
 * consumer sees exactly what the webhooks carry, with the same ids (`webhook-id`). docs/events.md.
 */

export const EventLogQuerySchema = z.object({
  after: z
    .string()
    .max(20)
    .optional()
    .openapi({ description: "A cursor: `0` (the default) for the oldest kept, else a page's `next`" }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_EVENTS_PAGE)
    .default(100)
    .openapi({ description: `Events per page, 1 to ${MAX_EVENTS_PAGE} (default 100)` }),
});

const LoggedEventSchema = z
  .object({
    id: z.string().openapi({ description: "The event's id: the `webhook-id` its webhook deliveries carry" }),
    cursor: z.string().openapi({ description: "Pass as `after` to read what follows this event" }),
    event: z.string().openapi({ example: "message.received" }),
    sessionId: z.string(),
    timestamp: z.string(),
    data: z.unknown().openapi({ description: "The webhook payload's `data`" }),
  })
  .openapi("SessionEvent");

export const EventLogSchema = z.object({
  events: z.array(LoggedEventSchema),
  next: z.string().openapi({ description: "The cursor after this page (the same one when it was empty)" }),
});

type EventLogQuery = z.infer<typeof EventLogQuerySchema>;

/** The 410 of a cursor older than retention, for the OpenAPI document of the page and the stream. */
export const CursorGoneResponse = {
  ...errorResponse("The cursor is older than the log's retention"),
  headers: z.object({
    "X-Oldest-Cursor": z.string().openapi({ description: "The oldest cursor still readable: read from it" }),
  }),
};

/** 410 naming the oldest readable cursor (also in X-Oldest-Cursor), for the page and the stream alike. */
export const cursorGone = (oldest: string) =>
  new ApiError(
    410,
    "Cursor past retention",
    `events before cursor ${oldest} were removed (retention); read again from after=${oldest}`,
    undefined,
    { "X-Oldest-Cursor": oldest },
  );

/** One page of the log, or 410 when `after` is past retention. */
export async function eventLogPage(c: Context<AppEnv>, session: SessionRow, query: EventLogQuery) {
  const after = query.after ?? "0";
  const page = await callSession(c.env, session, "events.read", { after, limit: query.limit });
  if ("gone" in page) throw cursorGone(page.oldestCursor);
  return ok("Events retrieved", { events: page.items, next: page.next });
}
