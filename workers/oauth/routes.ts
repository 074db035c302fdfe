import { Hono } from "hono";
import type { AppEnv } from "../core/env";
import { KEY_SCOPES } from "../core/scopes";
import {
  authorizationServer,
  PROTECTED_RESOURCE_METADATA,
  REGISTER_PATH,
  RESOURCE_PATH,
  TOKEN_PATH,
} from "./server";

/** RFC 9728: the resource, the one authorization server (this Worker), and the scopes of scoped keys. */
const protectedResourceMetadata = (origin: string) => ({
  resource: `${origin}${RESOURCE_PATH}`,
  authorization_servers: [origin],
  scopes_supported: [...KEY_SCOPES],
  bearer_methods_supported: ["header"],
  resource_name: "Switchboard MCP",
});

/**
 * The OAuth endpoints outside the dashboard: discovery, token, registration (the library serves the
 * authorization server's; the consent page is the dashboard's, /oauth/authorize). Mounted before the
 * dashboard, which would send these to the sign-in page. On an origin without OAuth (plain http, not
 * localhost) they answer 404.
 */
export function oauthRoutes() {
  const router = new Hono<AppEnv>();
  const metadata = (c: { req: { url: string } }) => {
    const origin = new URL(c.req.url).origin;
    return authorizationServer(origin) === null ? null : protectedResourceMetadata(origin);
  };
  for (const path of [PROTECTED_RESOURCE_METADATA, `${PROTECTED_RESOURCE_METADATA}${RESOURCE_PATH}`]) {
    router.get(path, (c) => {
      const body = metadata(c);
      c.header("Access-Control-Allow-Origin", "*");
      return body === null ? c.json({ error: "OAuth is not available on this origin" }, 404) : c.json(body);
    });
  }
  for (const path of ["/.well-known/oauth-authorization-server", TOKEN_PATH, REGISTER_PATH]) {
    router.all(path, (c) => {
      const server = authorizationServer(new URL(c.req.url).origin);
      if (server === null) return c.json({ error: "OAuth is not available on this origin" }, 404);
      // Hono types the context without the newer `tracing` member the library's type names; it is the same object.
      return server.fetch(c.req.raw, c.env, c.executionCtx as ExecutionContext);
    });
  }
  return router;
}
