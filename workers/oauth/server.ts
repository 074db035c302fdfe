import type { Env } from "../core/env";
import { KEY_SCOPES } from "../core/scopes";
import { OAuthAuthorizationServer, type OAuthHelpers } from "./library";

/** Where the OAuth endpoints live on this origin (the metadata advertises them). */
export const AUTHORIZE_PATH = "/oauth/authorize";
export const TOKEN_PATH = "/oauth/token";
export const REGISTER_PATH = "/oauth/register";
/** The one protected resource: the MCP endpoint. */
export const RESOURCE_PATH = "/mcp";

export const PROTECTED_RESOURCE_METADATA = "/.well-known/oauth-protected-resource";

/** Where /mcp's 401 points a client (RFC 9728 §5.1): the metadata of the /mcp resource. */
export const resourceMetadataUrl = (origin: string): string =>
  `${origin}${PROTECTED_RESOURCE_METADATA}${RESOURCE_PATH}`;

/** Access tokens live an hour; a grant (its refresh token) 30 days, renewed while the app uses it. */
const ACCESS_TOKEN_TTL_S = 60 * 60;
const GRANT_TTL_S = 30 * 24 * 60 * 60;

/**
 * The library wants its issuer fixed at construction, and this Worker learns its own origin only from
 * a request (no configured public URL): one server per origin, built on first use. The library
 * refuses an issuer that is neither https nor loopback http, as OAuth 2.1 does: such an origin has no
 * OAuth (null), and keys still work there.
 */
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
const allowsOAuth = (origin: string): boolean => {
  const url = new URL(origin);
  return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname));
};

const MAX_ORIGINS = 16;
const servers = new Map<string, OAuthAuthorizationServer<Env> | null>();

export function authorizationServer(origin: string): OAuthAuthorizationServer<Env> | null {
  if (servers.has(origin)) return servers.get(origin) ?? null;
  const server = allowsOAuth(origin)
    ? new OAuthAuthorizationServer<Env>({
        issuer: origin,
        resources: [`${origin}${RESOURCE_PATH}`],
        defaultResource: `${origin}${RESOURCE_PATH}`,
        authorizeEndpoint: `${origin}${AUTHORIZE_PATH}`,
        tokenEndpoint: `${origin}${TOKEN_PATH}`,
        clientRegistrationEndpoint: `${origin}${REGISTER_PATH}`,
        scopesSupported: [...KEY_SCOPES],
        accessTokenTTL: ACCESS_TOKEN_TTL_S,
        refreshTokenTTL: GRANT_TTL_S,
        refreshTokenIdleTTL: GRANT_TTL_S,
        // Our log format, and never a token: the library's descriptions name the problem only.
        onError: ({ status, code, description }) =>
          console.warn(JSON.stringify({ level: "warn", msg: "oauth error", status, code, description })),
      })
    : null;
  // A deployment has one or two origins; a flood of made-up Host headers must not grow the map.
  if (servers.size >= MAX_ORIGINS) servers.clear();
  servers.set(origin, server);
  return server;
}

/** The library's helpers (parse and complete an authorization, list and revoke grants) for an origin. */
export function oauthApi(env: Env, origin: string): OAuthHelpers | null {
  return authorizationServer(origin)?.getOAuthApi(env) ?? null;
}
