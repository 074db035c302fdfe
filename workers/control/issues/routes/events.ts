import { createRoute, z } from "@hono/zod-openapi";
import { controlAuth, controlError, controlErrors, createRouter } from "../../../http/openapi";
import { refuseCrossSiteUpgrade } from "../../../http/upgrade";
import { CompanyParamSchema } from "../../companies";
import { openLive } from "../../events/open";
import {
  CompanyCursorGoneResponse,
  CompanyEventsQuerySchema,
  companyEventsPage,
  companyEventsPageResponse,
} from "../../events/page";
import { companyFeed, LIVE_EVENTS_KEPT, type LiveInterest, watchRequest } from "../../live";
import { companyForActor, controlContext } from "../../shared";
import { locateVisibleIssue } from "../locator";
import { issueObject, issueObjectName } from "../object";
import { IssueParamSchema } from "../schemas";

/**
 * The dashboard's live sockets: one per issue (served by its IssueDO) and one per company's board
 * (its CompanyFeed). Authorised here like every read, then handed to the object.
 */
export const issueEventRoutes = createRouter();
const tags = ["Issues"];

const LiveQuerySchema = z.object({
  since: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .openapi({ description: "The last `seq` this client saw: the events after it follow `hello`" }),
  runId: z
    .uuid()
    .optional()
    .openapi({
      description:
        "Only this heartbeat run's run.started, run.ended and run.log (what the run's page listens to). " +
        "A run is announced on its issue's feed, or on its company's when it was woken for no issue",
    }),
});

/** What the socket listens for: one run's changes when asked, else the feed's default. */
const interestIn = (query: { runId?: string }, otherwise: LiveInterest): LiveInterest =>
  query.runId === undefined ? otherwise : { runId: query.runId };

const FRAMES =
  'Upgrade to a WebSocket. The server sends `{type:"hello", seq}` (the newest event number), then with ' +
  "`?since=N` every event after N, then each new event as it commits: " +
  '`{type:"event", seq, at, kind, companyId, issueId, …}`. When N is older than the last ' +
  `${LIVE_EVENTS_KEPT} events (or newer than the feed), \`{type:"reset", seq}\` says to re-read instead. ` +
  "The client may send `ping` (answered `pong`); anything else is ignored. A cross-site `Origin` is 403. " +
  "The server closes the socket when the caller's access ends: 4401 when their credential changed (key " +
  "revoked, sign-out, account changed), 4403 when their membership ended.";

const upgradeResponses = {
  101: { description: "Switching protocols; frames follow" },
  ...controlErrors,
  403: controlError("A cross-site Origin"),
  426: controlError("Not a WebSocket upgrade"),
};

issueEventRoutes.openapi(
  createRoute({
    method: "get",
    path: "/issues/{issueId}/events",
    tags,
    summary: "The issue's changes, live (what the dashboard's issue page listens to)",
    description: `${FRAMES} Kinds: issue.updated (with status, title, assignees), issue.deleted, comment.added, document.changed, question.changed, attachment.changed, blocker.changed (an issue it is blocked by changed status), run.started, run.ended, run.log.`,
    security: controlAuth,
    request: { params: IssueParamSchema, query: LiveQuerySchema },
    responses: upgradeResponses,
  }),
  async (c) => {
    refuseCrossSiteUpgrade(c);
    const { actor, db } = controlContext(c);
    const location = await locateVisibleIssue(db, actor, c.req.valid("param").issueId);
    const query = c.req.valid("query");
    const host = {
      binding: "ISSUE",
      name: issueObjectName(location),
      companyId: location.companyId,
    } as const;
    const stub = issueObject(c.env, location);
    return openLive(c, actor, host, (owner) =>
      stub.fetch(watchRequest(query.since, interestIn(query, "all"), owner, location.id)),
    );
  },
);

issueEventRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/events",
    tags,
    summary: "The company's control-plane events from a cursor; as a WebSocket, the board's live changes",
    description:
      "A plain GET reads the company's events (its activity log: every control-plane change, written in " +
      "the same transaction as the change) oldest first, `limit` at a time after the cursor `after` (0: " +
      "the oldest kept); `next` continues, and equals `after` on an empty page. A cursor older than " +
      "retention is 410 with X-Oldest-Cursor (and `details.oldestCursor`). docs/events.md. " +
      `As a WebSocket upgrade (\`since\`, \`runId\`): ${FRAMES} Kinds: issue.created, issue.updated, issue.deleted; with \`runId\`, that run's run.started, run.ended and run.log instead (a run woken for no issue).`,
    security: controlAuth,
    request: { params: CompanyParamSchema, query: LiveQuerySchema.extend(CompanyEventsQuerySchema.shape) },
    // A plain GET is the page, so unlike the issue's socket this URL never answers 426.
    responses: {
      200: companyEventsPageResponse,
      101: upgradeResponses[101],
      ...controlErrors,
      403: upgradeResponses[403],
      410: CompanyCursorGoneResponse,
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
      const company = await companyForActor(db, actor, c.req.valid("param").companyId);
      return c.json(await companyEventsPage(db, company.id, c.req.valid("query")), 200);
    }
    refuseCrossSiteUpgrade(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const query = c.req.valid("query");
    const host = { binding: "COMPANY_FEED", name: company.id, companyId: company.id } as const;
    const stub = companyFeed(c.env, company.id);
    return openLive(c, actor, host, (owner) =>
      stub.fetch(watchRequest(query.since, interestIn(query, "board"), owner)),
    );
  },
);
