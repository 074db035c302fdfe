import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import {
  CREDENTIALS_CHANGED,
  confirmLiveSocket,
  type LiveCut,
  type LiveHost,
  type LiveOwner,
  MEMBERSHIP_ENDED,
  noteLiveSocket,
  ownerTag,
} from "../../../auth/live-sockets";
import { currentOwner, keyExpiryOf } from "../../../auth/middleware";
import type { Actor } from "../../../core/actor";
import type { AppEnv } from "../../../core/env";
import { database } from "../../../db/client";
import { controlAuth, controlError, controlErrors, createRouter } from "../../../http/openapi";
import { refuseCrossSiteUpgrade, relayUpgrade } from "../../../http/upgrade";
import { CompanyParamSchema } from "../../companies";
import { companyFeed, LIVE_EVENTS_KEPT, type LiveInterest, watchRequest } from "../../live";
import { companyForActor, controlContext, membershipRole } from "../../shared";
import { locateVisibleIssue } from "../locator";
import { issueObject } from "../object";
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

/** Whose socket it is, for closing it when that access ends (auth/live-sockets.ts). */
const ownerOf = (actor: Actor): LiveOwner =>
  actor.type === "agent" ? { kind: "agent", id: actor.agentId } : { kind: "user", id: actor.userId };

/**
 * Notes the socket with its owner's Keyring shard, opens it in `host`, then checks the caller's access
 * again and closes it if a revocation raced the upgrade (auth/live-sockets.ts).
 */
async function openLive(
  c: Context<AppEnv>,
  actor: Actor,
  host: LiveHost,
  open: (ownerTag: string) => Promise<Response>,
): Promise<Response> {
  const owner = ownerOf(actor);
  await noteLiveSocket(c.env, owner, host, keyExpiryOf(c));
  const response = await relayUpgrade(open(ownerTag(owner)));
  if (response.status === 101) await confirmLiveSocket(c.env, owner, host, () => recheck(c, host));
  return response;
}

/** Why the caller may no longer listen to `host`'s company (read from the Keyring and D1), or null. */
async function recheck(c: Context<AppEnv>, host: LiveHost): Promise<LiveCut | null> {
  const now = await currentOwner(c);
  if (now === null) return CREDENTIALS_CHANGED;
  if (now.kind === "agent") return now.companyId === host.companyId ? null : CREDENTIALS_CHANGED;
  const role =
    host.companyId === null ? null : await membershipRole(database(c.env.DB), now.id, host.companyId);
  return role === null ? MEMBERSHIP_ENDED : null;
}

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
    const host = { binding: "ISSUE", name: location.id, companyId: location.companyId } as const;
    const stub = issueObject(c.env, location.id);
    return openLive(c, actor, host, (owner) =>
      stub.fetch(watchRequest(query.since, interestIn(query, "all"), owner)),
    );
  },
);

issueEventRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/events",
    tags,
    summary: "The company's issue changes, live (what the dashboard's board listens to)",
    description: `${FRAMES} Kinds: issue.created, issue.updated, issue.deleted; with \`runId\`, that run's run.started, run.ended and run.log instead (a run woken for no issue).`,
    security: controlAuth,
    request: { params: CompanyParamSchema, query: LiveQuerySchema },
    responses: upgradeResponses,
  }),
  async (c) => {
    refuseCrossSiteUpgrade(c);
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const query = c.req.valid("query");
    const host = { binding: "COMPANY_FEED", name: company.id, companyId: company.id } as const;
    const stub = companyFeed(c.env, company.id);
    return openLive(c, actor, host, (owner) =>
      stub.fetch(watchRequest(query.since, interestIn(query, "board"), owner)),
    );
  },
);
