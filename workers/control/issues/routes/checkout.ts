import { createRoute, z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { CredentialUnconfirmed } from "../../../auth/credential-guard";
import { withCredentialGuard } from "../../../auth/middleware";
import { type Actor, refOf } from "../../../core/actor";
import type { AppEnv } from "../../../core/env";
import type { Db } from "../../../db/client";
import { type AgentRow, agents } from "../../../db/schema";
import { badRequest, forbidden, notFound, unprocessable } from "../../../http/errors";
import {
  controlAuth,
  controlError,
  controlErrors,
  createRouter,
  json,
  jsonBody,
} from "../../../http/openapi";
import { canAccessCompany, controlContext } from "../../shared";
import { claimsInOneTrip } from "../checkout";
import { type IssueLocation, locateVisibleIssue } from "../locator";
import { CheckoutBodySchema, IssueSchema } from "../schemas";
import { findVisibleIssue } from "../store";
import { mutateIssue } from "./call";

/** Checkout and release: who holds an issue. Mounted at /api (see work.ts). */
export const issueCheckoutRoutes = createRouter();
const tags = ["Issues"];

export const IssueParamSchema = z.object({ issueId: z.string().min(1).max(100) });

/**
 * A response from mutateIssue as the typed route expects it. The IssueDO renders exactly the JSON the
 * route declares (issueResource and friends), but as a plain Response, which the typed handler
 * signature cannot see through; this is the one place that asserts it.
 */
export async function issueOpResponse(pending: Promise<Response>): Promise<never> {
  return (await pending) as never;
}

/** Agents that may not receive work: not yet hired, or gone for good. */
const UNASSIGNABLE: ReadonlySet<AgentRow["status"]> = new Set(["pending_approval", "terminated"]);

/**
 * The id of the agent that is to hold the issue. An agent checks out only as itself: its key proves
 * it is neither pending_approval nor terminated, and the issue was found in its own company. A board
 * user names any agent of the issue's company; an agent the caller cannot see answers like an
 * unknown one (404), one of another company the caller does see cannot take this issue (422).
 */
async function claimantIdFor(db: Db, actor: Actor, issue: IssueLocation, agentId: string): Promise<string> {
  if (actor.type === "agent") {
    if (actor.agentId !== agentId) throw forbidden("Agent can only checkout as itself");
    return actor.agentId;
  }
  const agent = await db.select().from(agents).where(eq(agents.id, agentId)).get();
  if (!agent) throw notFound("Agent not found");
  if (agent.companyId !== issue.companyId) {
    if (!(await canAccessCompany(db, actor, agent.companyId))) throw notFound("Agent not found");
    throw unprocessable("Agent belongs to another company", { agentId, companyId: issue.companyId });
  }
  if (UNASSIGNABLE.has(agent.status)) {
    throw unprocessable(`Agent cannot take work while ${agent.status}`, { agentId, status: agent.status });
  }
  return agent.id;
}

issueCheckoutRoutes.openapi(
  createRoute({
    method: "post",
    path: "/issues/{issueId}/checkout",
    tags,
    summary: "Check out an issue: claim it and start work, atomically",
    description:
      "Moves a todo issue to in_progress with the agent as its only assignee and sets started_at. " +
      "Idempotent for the agent that already holds it in progress. 409 when another agent holds it or " +
      "its status is not among expectedStatuses (details name the holder: do not retry, pick another " +
      "issue); 422 when expectedStatuses matches but checkout cannot start from that status (only todo).",
    security: controlAuth,
    request: { params: IssueParamSchema, ...jsonBody(CheckoutBodySchema) },
    responses: {
      200: json(IssueSchema, "The issue, in progress and held by the agent"),
      ...controlErrors,
      409: controlError("Held by another agent, or status not among expectedStatuses"),
      422: controlError("Checkout cannot start from this status, or the agent cannot take work"),
    },
  }),
  (c) =>
    issueOpResponse(
      withCredentialGuard(c, async (guard) => {
        const { actor, db } = controlContext(c);
        const issue = await locateVisibleIssue(db, actor, c.req.valid("param").issueId);
        const body = c.req.valid("json");
        const agentId = await claimantIdFor(db, actor, issue, body.agentId);
        // Only the one-batch claim carries a guard: confirm the caller now for any other path.
        if (guard && !claimsInOneTrip(refOf(actor), body.expectedStatuses)) throw new CredentialUnconfirmed();
        return mutateIssue(c, issue, {
          kind: "checkout",
          actor: refOf(actor),
          input: {
            agentId,
            runId: actor.type === "agent" ? actor.runId : null,
            expectedStatuses: body.expectedStatuses,
          },
          ...(guard ? { guard } : {}),
        });
      }),
    ),
);

/**
 * Release takes no fields. The body is optional and may be `{}`; anything else is a 400. Read by
 * hand because a client that sends `Content-Type: application/json` with no body at all is common.
 */
async function assertEmptyBody(c: Context<AppEnv>): Promise<void> {
  const text = (await c.req.text()).trim();
  if (text === "") return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badRequest("Malformed JSON in request body");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed) || Object.keys(parsed).length) {
    throw badRequest("release takes no body fields: send {} or nothing");
  }
}

issueCheckoutRoutes.openapi(
  createRoute({
    method: "post",
    path: "/issues/{issueId}/release",
    tags,
    summary: "Release an issue: give up ownership",
    description:
      "The assignee agent, or a board user, gives the issue back: in_progress returns to todo; any other " +
      "status stays. The assignee is cleared either way. Body: none or `{}`. 409 for an agent that is " +
      "not the assignee.",
    security: controlAuth,
    request: {
      params: IssueParamSchema,
      body: {
        content: { "application/json": { schema: { type: "object", additionalProperties: false } } },
        required: false,
      },
    },
    responses: {
      200: json(IssueSchema, "The issue, released"),
      ...controlErrors,
      409: controlError("The caller is an agent that does not hold the issue"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const issue = await findVisibleIssue(db, actor, c.req.valid("param").issueId);
    await assertEmptyBody(c);
    return issueOpResponse(mutateIssue(c, issue, { kind: "release", actor: refOf(actor) }));
  },
);
