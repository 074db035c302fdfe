import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { redeemInvite } from "../control/invites";
import type { AppEnv } from "../core/env";
import { database } from "../db/client";
import { ApiError, notFound, titleOf } from "../http/errors";
import { controlAuth, controlError, controlErrors, createRouter } from "../http/openapi";
import { adapterConfigurationText, agentConfigurationText, isAdapterType } from "./agent-configuration";
import { agentIconsText } from "./agent-icons";
import { onboardingText } from "./onboarding";

/**
 * Plain-text guidance for agents under /llms (outside /api: an agent reads them as documents).
 * `llmsRoutes` need an agent key or board credentials (app.ts mounts the authentication middleware
 * for /llms/*); `llmsPublicRoutes` is the invite onboarding text, whose token is the credential, so
 * it is mounted before that middleware.
 */
export const llmsRoutes = createRouter();
export const llmsPublicRoutes = createRouter();
const tags = ["Agent guidance"];

const TEXT = "text/plain; charset=utf-8";
const textResponse = (description: string) => ({
  content: { [TEXT]: { schema: z.string() } },
  description,
});

function text(c: Context<AppEnv>, body: string, cacheControl: string) {
  c.header("Cache-Control", cacheControl);
  return c.text(body, 200, { "Content-Type": TEXT });
}

const origin = (c: Context<AppEnv>) => new URL(c.req.url).origin;
/** Guides change only with a deploy; a short private cache saves an agent a round trip per heartbeat. */
const GUIDE_CACHE = "private, max-age=300";

/** `<name>.txt` → name; anything else is not one of these documents. */
function txtName(file: string): string {
  if (!file.endsWith(".txt")) throw notFound("Not found");
  return file.slice(0, -".txt".length);
}

llmsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/llms/agent-configuration.txt",
    tags,
    summary: "How to configure agents: adapters, adapterConfig, env and secrets, heartbeat, run environment",
    security: controlAuth,
    responses: { 200: textResponse("The guide"), ...controlErrors },
  }),
  (c) => text(c, agentConfigurationText(`${origin(c)}/api`, origin(c)), GUIDE_CACHE),
);

llmsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/llms/agent-configuration/{file}",
    tags,
    summary: "One adapter type's configuration guide: `/llms/agent-configuration/<adapterType>.txt`",
    description: "An unknown adapter type is a 404.",
    security: controlAuth,
    request: { params: z.object({ file: z.string().max(100).openapi({ example: "coder_local.txt" }) }) },
    responses: { 200: textResponse("The guide"), ...controlErrors },
  }),
  (c) => {
    const type = txtName(c.req.valid("param").file);
    if (!isAdapterType(type)) throw notFound(`Unknown adapter type ${type}`);
    return text(c, adapterConfigurationText(type, `${origin(c)}/api`, origin(c)), GUIDE_CACHE);
  },
);

llmsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/llms/agent-icons.txt",
    tags,
    summary: "Recommended agent icon names",
    security: controlAuth,
    responses: { 200: textResponse("The list"), ...controlErrors },
  }),
  (c) => text(c, agentIconsText(), GUIDE_CACHE),
);

llmsPublicRoutes.openapi(
  createRoute({
    method: "get",
    path: "/llms/onboarding/{file}",
    tags,
    summary:
      "Onboarding text of an invite: `/llms/onboarding/<token>.txt` (no credentials: the token is one)",
    description:
      "Works once: the first GET marks the invite used. A used or expired invite answers 410, an " +
      "unknown token 404.",
    security: [],
    request: { params: z.object({ file: z.string().max(200) }) },
    responses: {
      200: textResponse("Onboarding guidance for the invited agent"),
      404: controlError("Unknown token"),
      410: controlError("The invite was already used, or has expired"),
    },
  }),
  async (c) => {
    c.header("Cache-Control", "no-store");
    const token = txtName(c.req.valid("param").file);
    const result = await redeemInvite(database(c.env.DB), token, Date.now());
    if (result.kind === "unknown") throw notFound("Invite not found");
    if (result.kind !== "redeemed")
      throw new ApiError(
        410,
        titleOf(410),
        `This invite ${result.kind === "used" ? "was already used" : "has expired"}`,
      );
    return text(c, onboardingText(result.company, origin(c)), "no-store");
  },
);
