import type { Env } from "../core/env";
import type { KeyGrant } from "../core/scopes";
import type { GrantRecord } from "./access";
import { AuthorizationError, type AuthRequest, authorizationErrorRedirect } from "./library";
import { AUTHORIZE_PATH, oauthApi } from "./server";

/** An authorization request the library accepted, with what the consent page shows of it. */
export interface PendingAuthorization {
  request: AuthRequest;
  /** The request's query, which the consent form posts back (parsed and checked again then). */
  query: string;
  clientName: string;
  redirectHost: string;
}

/**
 * The authorization request in `url`'s query, checked by the library (a registered client, one of its
 * redirect URIs, the resource) and by us: PKCE with S256 is required of every client (the library
 * requires it of public clients only; "plain" it refuses). A refusal is shown on the page, never sent
 * to a redirect URI that may not be the client's.
 */
export async function readAuthorization(env: Env, url: URL): Promise<PendingAuthorization | string> {
  const api = oauthApi(env, url.origin);
  if (api === null) return "OAuth is available only over https (or http on localhost).";
  let request: AuthRequest;
  try {
    request = await api.parseAuthRequest(new Request(`${url.origin}${AUTHORIZE_PATH}${url.search}`));
  } catch (error) {
    return error instanceof AuthorizationError ? error.description : `Invalid request: ${String(error)}`;
  }
  if (!request.codeChallenge || request.codeChallengeMethod !== "S256")
    return "The app must use PKCE with code_challenge_method=S256.";
  const consent = await api.describeConsent(request);
  return { request, query: url.search, clientName: consent.clientName, redirectHost: consent.redirectHost };
}

/** Where the browser goes once the user approved `grant`: the client's redirect URI with a code. */
export async function approveAuthorization(
  env: Env,
  origin: string,
  pending: PendingAuthorization,
  userId: string,
  grant: KeyGrant,
): Promise<string> {
  const api = oauthApi(env, origin);
  if (api === null) throw new Error("OAuth is not available on this origin");
  const record: GrantRecord = { grant, clientName: pending.clientName };
  const { redirectTo } = await api.completeAuthorization({
    request: pending.request,
    userId,
    scope: [...grant.scopes],
    props: record,
    metadata: record,
  });
  return redirectTo;
}

/** Where the browser goes once the user denied: the client's redirect URI with error=access_denied. */
export const denialRedirect = (origin: string, pending: PendingAuthorization): string =>
  authorizationErrorRedirect(
    { redirectUri: pending.request.redirectUri, state: pending.request.state, issuer: origin },
    "access_denied",
    "The user denied access",
  );
