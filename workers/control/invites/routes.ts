import { createRoute, z } from "@hono/zod-openapi";
import { authorColumns, refOf } from "../../core/actor";
import { iso, newId } from "../../db/client";
import { inviteTokens } from "../../db/schema";
import { controlAuth, controlErrors, createRouter, json } from "../../http/openapi";
import { CompanyParamSchema } from "../companies";
import { activityInsert, companyForActor, controlContext } from "../shared";
import { assertMayInvite, INVITE_DEFAULT_MINUTES, INVITE_MAX_MINUTES, newInviteToken } from "./store";

/** The invite prompt: a paragraph an operator pastes into an external agent, with a one-time onboarding link. */
export const inviteRoutes = createRouter();

const InvitePromptBodySchema = z
  .strictObject({
    expiresInMinutes: z
      .number()
      .int()
      .min(1)
      .max(INVITE_MAX_MINUTES)
      .optional()
      .openapi({ description: `Default ${INVITE_DEFAULT_MINUTES}, at most ${INVITE_MAX_MINUTES} (a day)` }),
    agentMessage: z
      .string()
      .trim()
      .max(2000)
      .optional()
      .openapi({ description: "A note to the invited agent, appended to the prompt" }),
  })
  .openapi("InvitePromptBody");

const InvitePromptSchema = z
  .object({
    id: z.string(),
    token: z.string().openapi({ description: "`swi_…`; shown only here, only its SHA-256 is stored" }),
    expiresAt: z.string().openapi({ format: "date-time" }),
    onboardingUrl: z.string().openapi({ description: "`<origin>/llms/onboarding/<token>.txt`, single use" }),
    prompt: z.string(),
  })
  .openapi("InvitePrompt");

function promptText(
  companyName: string,
  url: string,
  expiresAt: string,
  message: string | undefined,
): string {
  const base =
    `You are invited to work as an agent of the company "${companyName}" on this agent control plane. ` +
    `Fetch your onboarding instructions with an HTTP GET of ${url} — the link works once and expires at ` +
    `${expiresAt}, so save what it returns. It tells you how to authenticate, which API to call and the ` +
    "heartbeat protocol to follow; follow it, and do not share the link.";
  return message ? `${base}\n\nMessage from the operator: ${message}` : base;
}

inviteRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/external-agent/invite-prompt",
    tags: ["Companies"],
    summary: "Create an invite prompt for an external agent (company owners; the CEO agent)",
    description:
      "Returns a single-use token (shown once), the onboarding text URL built from this request's " +
      "origin, its expiry and a prompt to paste into the external agent. Board members who are not " +
      "owners, and agents other than the CEO, get 403. The body is optional.",
    security: controlAuth,
    request: {
      params: CompanyParamSchema,
      body: { content: { "application/json": { schema: InvitePromptBodySchema } }, required: false },
    },
    responses: { 201: json(InvitePromptSchema, "The invite"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    await assertMayInvite(db, actor, company.id);
    const body = c.req.valid("json") ?? {};
    const now = Date.now();
    const expiresAt = now + (body.expiresInMinutes ?? INVITE_DEFAULT_MINUTES) * 60_000;
    const { token, hash } = await newInviteToken();
    const author = authorColumns(refOf(actor));
    const id = newId();
    await db.batch([
      db.insert(inviteTokens).values({
        id,
        companyId: company.id,
        tokenHash: hash,
        expiresAt,
        usedAt: null,
        createdByUserId: author.userId,
        createdByAgentId: author.agentId,
        createdAt: now,
      }),
      activityInsert(
        db,
        {
          companyId: company.id,
          actor: refOf(actor),
          action: "invite.created",
          entityType: "invite",
          entityId: id,
          details: { expiresAt: iso(expiresAt) },
        },
        now,
      ),
    ]);
    const onboardingUrl = `${new URL(c.req.url).origin}/llms/onboarding/${token}.txt`;
    return c.json(
      {
        id,
        token,
        expiresAt: iso(expiresAt),
        onboardingUrl,
        prompt: promptText(company.name, onboardingUrl, iso(expiresAt), body.agentMessage),
      },
      201,
    );
  },
);
