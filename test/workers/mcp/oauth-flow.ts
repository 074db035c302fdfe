// An MCP client that only speaks the MCP authorization spec, driven step by step against the Worker:
// discovery from /mcp's 401, dynamic registration, the dashboard's consent page with a signed-in
// user's cookie, the code exchange with PKCE. Shared by the OAuth tests.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect } from "vitest";
import { dispatch, type Session } from "../helpers";
import { abortableDispatch } from "./client";

/** OAuth 2.1 wants https (or loopback http): the tests' usual http://switchboard.test has no OAuth. */
export const ORIGIN = "https://switchboard.test";
export const MCP = `${ORIGIN}/mcp`;
export const REDIRECT_URI = "http://127.0.0.1:33418/callback";

export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

export const fetchAt = (url: string, init: RequestInit = {}) =>
  dispatch(new Request(url, { redirect: "manual", ...init }));

export const postMcp = (headers: Record<string, string>, message: unknown = INITIALIZE) =>
  fetchAt(MCP, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(message),
  });

export interface ServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint: string;
  code_challenge_methods_supported: string[];
}

/** What a client learns from a keyless request: the challenge, the resource's and the server's metadata. */
export async function discover() {
  const refused = await postMcp({});
  expect(refused.status).toBe(401);
  const challenge = refused.headers.get("WWW-Authenticate") ?? "";
  const metadataUrl = challenge.match(/resource_metadata="([^"]+)"/)?.[1] ?? "";
  const resource = (await (await fetchAt(metadataUrl)).json()) as {
    resource: string;
    authorization_servers: string[];
    scopes_supported: string[];
  };
  const issuer = resource.authorization_servers[0] ?? "";
  const server = (await (
    await fetchAt(`${issuer}/.well-known/oauth-authorization-server`)
  ).json()) as ServerMetadata;
  return { challenge, metadataUrl, resource, server };
}

export async function register(server: ServerMetadata, name = "Test Desktop"): Promise<string> {
  const response = await fetchAt(server.registration_endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { client_id: string }).client_id;
}

const base64url = (bytes: ArrayBuffer) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)).buffer);
  const challenge = base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  return { verifier, challenge };
}

export function authorizeUrl(
  server: ServerMetadata,
  clientId: string,
  challenge: string,
  extra: Record<string, string> = {},
): string {
  const query = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "state-123",
    scope: "read",
    resource: MCP,
    ...extra,
  });
  return `${server.authorization_endpoint}?${query}`;
}

const unescapeHtml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

export const hiddenField = (html: string, name: string): string =>
  unescapeHtml(html.match(new RegExp(`name="${name}" value="([^"]*)"`))?.[1] ?? "");

/** The consent page as the signed-in user sees it. */
export async function consentPage(session: Session, url: string) {
  const page = await fetchAt(url, { headers: { cookie: session.cookie } });
  return { status: page.status, html: await page.text() };
}

/** Answers the consent form; the redirect's Location (the app's redirect URI with code or error). */
export async function decide(
  session: Session,
  url: string,
  fields: Record<string, string>,
): Promise<{ status: number; location: URL | null; html: string }> {
  const { html } = await consentPage(session, url);
  const response = await fetchAt(`${ORIGIN}/oauth/authorize`, {
    method: "POST",
    headers: { cookie: session.cookie, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      _csrf: hiddenField(html, "_csrf"),
      request: hiddenField(html, "request"),
      ...fields,
    }),
  });
  const location = response.headers.get("Location");
  return {
    status: response.status,
    location: location ? new URL(location) : null,
    html: await response.text(),
  };
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: string;
  scope: string;
}

export const tokenRequest = (server: ServerMetadata, fields: Record<string, string>) =>
  fetchAt(server.token_endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });

export const exchangeCode = (server: ServerMetadata, clientId: string, code: string, verifier: string) =>
  tokenRequest(server, {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    code_verifier: verifier,
    resource: MCP,
  });

/** The whole flow for `session`'s user, approving `grant` (form fields); the tokens and the client id. */
export async function connectApp(
  session: Session,
  grant: Record<string, string> = { scope_read: "on" },
  name = "Test Desktop",
): Promise<{ tokens: Tokens; clientId: string; server: ServerMetadata }> {
  const { server } = await discover();
  const clientId = await register(server, name);
  const { verifier, challenge } = await pkce();
  const approved = await decide(session, authorizeUrl(server, clientId, challenge), {
    decision: "approve",
    ...grant,
  });
  expect(approved.status, approved.html).toBe(302);
  const code = approved.location?.searchParams.get("code") ?? "";
  const exchanged = await exchangeCode(server, clientId, code, verifier);
  expect(exchanged.status).toBe(200);
  return { tokens: (await exchanged.json()) as Tokens, clientId, server };
}

/** The official SDK client on /mcp with an access token. */
export async function connectWithToken(accessToken: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(MCP), {
    requestInit: { headers: { Authorization: `Bearer ${accessToken}` } },
    fetch: abortableDispatch,
  });
  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}
