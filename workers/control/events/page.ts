import { z } from "@hono/zod-openapi";
import type { Db } from "../../db/client";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { controlError, gatewayOk, json } from "../../http/openapi";
import { companyEventOf, MAX_COMPANY_EVENTS_PAGE, oldestCursorIfGone, readCompanyEvents } from "./log";

/**
 * A company's control-plane events from a cursor (issue 33): the page's schemas, the 410 of a cursor
 * older than retention, and the page itself. docs/events.md has the contract.
 */

const CursorSchema = z
  .string()
  .regex(/^\d{1,15}$/, "a cursor: 0 or an event's cursor")
  .openapi({ description: "A cursor: `0` (the default) for the oldest kept, else a page's `next`" });

export const CompanyEventsQuerySchema = z.object({
  after: CursorSchema.optional(),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_COMPANY_EVENTS_PAGE)
    .default(100)
    .openapi({ description: `Events per page, 1 to ${MAX_COMPANY_EVENTS_PAGE} (default 100)` }),
});

export const CompanyStreamQuerySchema = z.object({ after: CursorSchema.optional() });

const CompanyEventSchema = z
  .object({
    id: z
      .string()
      .openapi({ description: "The activity entry's id (GET /companies/{id}/activity lists it)" }),
    cursor: z.string().openapi({ description: "Pass as `after` to read what follows this event" }),
    event: z.string().openapi({ example: "issue.created", description: "The activity's action" }),
    companyId: z.string(),
    timestamp: z.string(),
    data: z.object({
      actorType: z.enum(["user", "agent", "system"]),
      actorId: z.string(),
      entityType: z.string().openapi({ example: "issue" }),
      entityId: z.string(),
      details: z.record(z.string(), z.unknown()).openapi({ description: "The activity's details" }),
    }),
  })
  .openapi("CompanyEvent");

export const CompanyEventPageSchema = gatewayOk(
  z.object({
    events: z.array(CompanyEventSchema),
    next: z.string().openapi({ description: "The cursor after this page (the same one when it was empty)" }),
  }),
);

/** The 410 of a cursor older than retention, for the OpenAPI document of the page and the stream. */
export const CompanyCursorGoneResponse = {
  ...controlError(
    "The cursor is older than the log's retention; `details.oldestCursor` is the oldest readable",
  ),
  headers: z.object({
    "X-Oldest-Cursor": z.string().openapi({ description: "The oldest cursor still readable: read from it" }),
  }),
};

/** 410 naming the oldest readable cursor (in X-Oldest-Cursor and the body). */
export const companyCursorGone = (oldest: string) =>
  new ApiError(
    410,
    "Cursor past retention",
    `events before cursor ${oldest} were removed (retention); read again from after=${oldest}`,
    { oldestCursor: oldest },
    { "X-Oldest-Cursor": oldest },
  );

/** Throws the 410 when `after` is older than what the log keeps. */
export async function refuseGoneCursor(db: Db, after: number): Promise<void> {
  const oldest = await oldestCursorIfGone(db, after);
  if (oldest !== null) throw companyCursorGone(oldest);
}

/** One page of the company's events after the query's cursor, or the 410 when it is past retention. */
export async function companyEventsPage(
  db: Db,
  companyId: string,
  query: z.infer<typeof CompanyEventsQuerySchema>,
) {
  const after = Number(query.after ?? "0");
  const read = await readCompanyEvents(db, companyId, after, query.limit);
  if ("oldestCursor" in read) throw companyCursorGone(read.oldestCursor);
  const events = read.rows.map(companyEventOf);
  return ok("Events retrieved", { events, next: events.at(-1)?.cursor ?? String(after) });
}

export const companyEventsPageResponse = json(CompanyEventPageSchema, "One page of the company's events");
