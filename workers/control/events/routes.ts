import { createRoute } from "@hono/zod-openapi";
import { controlAuth, controlError, controlErrors, createRouter } from "../../http/openapi";
import { refuseCrossSiteUpgrade } from "../../http/upgrade";
import { CompanyParamSchema } from "../companies";
import { companyFeed } from "../live";
import { companyForActor, controlContext } from "../shared";
import { openLive } from "./open";
import { CompanyCursorGoneResponse, CompanyStreamQuerySchema, refuseGoneCursor } from "./page";

/**
 * A company's control-plane events live (issue 33): the WebSocket that replays the activity log from a
 * cursor and follows it. The page (`GET /companies/{id}/events`) shares its URL with the board's socket
 * and is served there (issues/routes/events.ts).
 */
export const companyEventStreamRoutes = createRouter();

companyEventStreamRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/events/stream",
    tags: ["Companies"],
    summary: "The company's control-plane events over a WebSocket: replayed from a cursor, then followed",
    description:
      "Upgrade to a WebSocket. Every event after `after` (0: the oldest kept) is sent at once, one JSON " +
      "message each (`{id, cursor, event, companyId, timestamp, data}`, as GET …/events pages them), then " +
      "each new one as it commits (within about a second): exactly once, in order. Reconnect with the last " +
      "`cursor` you saw. A cursor older than retention is 410 with X-Oldest-Cursor; if retention overtakes " +
      "an open stream it is closed with 4410. The socket closes when the caller's access ends (4401 when " +
      "their credential changed, 4403 when their membership ended). A cross-site `Origin` is 403. " +
      "Messages from the client are ignored. docs/events.md.",
    security: controlAuth,
    request: { params: CompanyParamSchema, query: CompanyStreamQuerySchema },
    responses: {
      101: { description: "Switching protocols; the events follow" },
      ...controlErrors,
      403: controlError("A cross-site Origin"),
      410: CompanyCursorGoneResponse,
      426: controlError("Not a WebSocket upgrade"),
    },
  }),
  async (c) => {
    refuseCrossSiteUpgrade(c);
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const after = c.req.valid("query").after ?? "0";
    await refuseGoneCursor(db, Number(after));
    const host = { binding: "COMPANY_FEED", name: company.id, companyId: company.id } as const;
    const stub = companyFeed(c.env, company.id);
    return openLive(c, actor, host, (owner) => stub.fetch(streamRequest(company.id, after, owner)));
  },
);

/** The upgrade the company's CompanyFeed answers with a stream (durable-objects/company-feed.ts). */
function streamRequest(companyId: string, after: string, owner: string): Request {
  const url = new URL("https://live/events-stream");
  url.searchParams.set("company", companyId);
  url.searchParams.set("after", after);
  url.searchParams.set("who", owner);
  return new Request(url, { headers: { Upgrade: "websocket" } });
}
