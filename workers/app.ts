import type { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { requestId } from "hono/request-id";
import { secureHeaders } from "hono/secure-headers";
import { MEDIA_MEMORY_MAX_BYTES } from "../bridge/src/protocol/messaging";
import { registerLineInbound } from "../durable-objects/messaging/line/relay";
import { apiKeyRoutes } from "./auth/api-key";
import { recognizeInProcessCalls } from "./auth/in-process";
import { requireAuthentication } from "./auth/middleware";
import { userRoutes } from "./auth/users";
import { webSessionRoutes } from "./auth/web-session";
import { bridgeLinkRoutes } from "./bridge-link";
import { registerLineAppFetch } from "./control/line";
import { lineAnswersHandler } from "./control/line/answers";
import { controlRoutes } from "./control/routes";
import { runnerLinkRoutes } from "./control/runners/link";
import { keyCompanyGate, viewerGate } from "./control/shared";
import type { AppEnv } from "./core/env";
import { createDashboard } from "./dashboard";
import { autoRepliesRoutes } from "./gateway/auto-replies";
import { bridgeRoutes } from "./gateway/bridges/routes";
import { broadcastsRoutes } from "./gateway/broadcasts";
import { chatsRoutes } from "./gateway/chats";
import { contactsRoutes } from "./gateway/contacts";
import { deprecatedRoutes } from "./gateway/deprecated";
import { groupsRoutes } from "./gateway/groups/routes";
import { labelsRoutes } from "./gateway/labels";
import { messageActionRoutes } from "./gateway/messages/actions";
import { mediaMessageRoutes } from "./gateway/messages/media-routes";
import { messagesRoutes } from "./gateway/messages/routes";
import { signedMediaRoutes } from "./gateway/messages/signed-media-routes";
import { profileRoutes } from "./gateway/profile";
import { schedulerRoutes } from "./gateway/scheduler";
import { botConfigRoutes } from "./gateway/sessions/bot-config";
import { proxyRoutes } from "./gateway/sessions/proxy";
import { qrRoutes } from "./gateway/sessions/qr";
import { sessionRoutes } from "./gateway/sessions/routes";
import { sessionSharingRoutes } from "./gateway/sessions/sharing";
import { simulatorRoutes } from "./gateway/sessions/simulator";
import { documentWebhookEvents } from "./gateway/webhooks";
import { webhooksRoutes } from "./gateway/webhooks/routes";
import { renderDocsPage } from "./http/docs-page";
import { ApiError, handleError, handleNotFound, renderError, titleOf } from "./http/errors";
import { limitJsonDepth } from "./http/json-depth";
import { createRouter, documentAppWideErrors } from "./http/openapi";
import { isStreamedUpload, isUpload } from "./http/uploads";
import { scopedKeyRoutes } from "./keys/routes";
import { llmsPublicRoutes, llmsRoutes } from "./llms/routes";
import { mcpRoutes } from "./mcp/routes";
import { oauthRoutes } from "./oauth/routes";
import { systemRoutes } from "./system";

/** JSON bodies above 1 MiB answer 413 before any handler reads them. */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;
/** Multipart uploads held in memory (pictures, company logos, issue attachments): one such file plus form overhead. */
export const UPLOAD_BODY_LIMIT_BYTES = MEDIA_MEMORY_MAX_BYTES + 64 * 1024;
const limitBody = (maxSize: number) =>
  bodyLimit({
    maxSize,
    onError: (c) => renderError(c, new ApiError(413, titleOf(413), `Request body exceeds ${maxSize} bytes`)),
  });
const jsonLimit = limitBody(JSON_BODY_LIMIT_BYTES);
const uploadLimit = limitBody(UPLOAD_BODY_LIMIT_BYTES);

/**
 * The media upload route is held to each kind's limit by the route itself, as it streams: Hono's
 * bodyLimit would read a body sent without Content-Length (chunked) whole into memory first.
 */
const streamedUpload: MiddlewareHandler = (_c, next) => next();

function bodyLimitFor(method: string, path: string, contentType: string | undefined): MiddlewareHandler {
  if (isStreamedUpload(method, path, contentType)) return streamedUpload;
  return isUpload(method, path, contentType) ? uploadLimit : jsonLimit;
}

export const OPENAPI_CONFIG = {
  openapi: "3.1.0",
  info: {
    title: "Switchboard API",
    version: "0.1.0",
    description:
      "Messaging gateway (WhatsApp sessions, messages, webhooks) and control plane for companies of AI agents. " +
      "Authenticate with `X-API-Key` or the `web-auth.session-token` cookie (plus `X-CSRF-Token` on cookie " +
      "requests that change state).",
  },
};

export function createApp(): OpenAPIHono<AppEnv> {
  const app = createRouter();

  app.use("/api/*", recognizeInProcessCalls);
  app.use("*", requestId());
  app.use("*", secureHeaders());
  app.use("/api/*", async (c, next) => {
    await next();
    c.header("Cache-Control", "no-store");
  });
  app.use("/api/*", (c, next) =>
    bodyLimitFor(c.req.method, c.req.path, c.req.header("content-type"))(c, next),
  );
  app.use("/api/*", requireAuthentication);
  app.use("/api/*", viewerGate);
  app.use("/api/*", keyCompanyGate);
  app.use("/api/*", limitJsonDepth);

  app.route("/api", systemRoutes);
  app.route("/api/auth", webSessionRoutes);
  app.route("/api/users", userRoutes);
  app.route("/api/user/api-key", apiKeyRoutes);
  app.route("/api/user/keys", scopedKeyRoutes);
  // Specific session sub-resources first: `POST /{id}/{action}` would otherwise claim them.
  app.route("/api/sessions", botConfigRoutes);
  app.route("/api/sessions", proxyRoutes);
  app.route("/api/sessions", sessionSharingRoutes);
  app.route("/api/sessions", simulatorRoutes);
  app.route("/api/sessions", qrRoutes);
  app.route("/api/sessions", sessionRoutes);
  // Messaging. Deprecated single-segment paths first (`/messages/poll` is not a `{sessionId}`).
  app.route("/api", deprecatedRoutes);
  app.route("/api/messages", broadcastsRoutes);
  app.route("/api/messages", messagesRoutes);
  app.route("/api/messages", messageActionRoutes);
  app.route("/api/messages", mediaMessageRoutes);
  app.route("/api/media", signedMediaRoutes);
  app.route("/api", chatsRoutes);
  app.route("/api/contacts", contactsRoutes);
  app.route("/api/groups", groupsRoutes);
  app.route("/api", labelsRoutes);
  app.route("/api", profileRoutes);
  app.route("/api/scheduler", schedulerRoutes);
  app.route("/api/autoreplies", autoRepliesRoutes);
  app.route("/api/webhooks", webhooksRoutes);
  app.route("/api/bridges", bridgeRoutes);
  // On the app, not the router: a mounted router would prefix the event names with its path.
  documentWebhookEvents(app);
  app.route("/bridge/v1", bridgeLinkRoutes);
  app.route("/runner/v1", runnerLinkRoutes);
  app.route("/api", controlRoutes);
  // Agent guidance texts, outside /api. The invite onboarding text comes first: its token is the
  // credential, and a handler that answers never reaches middleware registered after it.
  app.route("/", llmsPublicRoutes);
  app.use("/llms/*", requireAuthentication);
  app.route("/", llmsRoutes);

  // MCP (Streamable HTTP): its tools call the routes above in-process, as the caller (workers/mcp).
  app.use("/mcp", jsonLimit);
  app.route(
    "/mcp",
    mcpRoutes(async (request, env, ctx) => app.fetch(request, env, ctx)),
  );
  // The company line's notices are sent through the gateway's own routes, in-process (control/line).
  registerLineAppFetch(async (request, env, ctx) => app.fetch(request, env, ctx));
  // Members' answers on the company's WhatsApp line reach the same routes in-process, as the member.
  registerLineInbound(lineAnswersHandler(async (request, env, ctx) => app.fetch(request, env, ctx)));

  // OAuth for browser-based MCP clients: discovery, token, registration (the consent page is the dashboard's).
  app.route("/", oauthRoutes());

  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "AgentKey", {
    type: "http",
    scheme: "bearer",
    description: "An agent key from POST /api/agents/{agentId}/keys (control-plane routes only).",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "SessionCookie", {
    type: "apiKey",
    in: "cookie",
    name: "web-auth.session-token",
  });
  documentAppWideErrors(app);
  app.doc31("/api/openapi.json", OPENAPI_CONFIG);
  app.get("/api/docs", (c) => {
    c.header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
    return c.html(
      renderDocsPage(app.getOpenAPI31Document(OPENAPI_CONFIG) as unknown as Record<string, unknown>),
    );
  });
  // Last: the dashboard owns every path the API, the bridges and /llms do not.
  app.route(
    "/",
    createDashboard(async (request, env, ctx) => app.fetch(request, env, ctx)),
  );

  app.notFound(handleNotFound);
  app.onError(handleError);
  return app;
}
