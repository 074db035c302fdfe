// The official SDK client's own OAuth support (client/auth.js) against /mcp: from the 401 it discovers
// the server, registers, sends the "browser" (here: the signed-in user's cookie) to the consent page,
// and exchanges the code with its PKCE verifier, as Claude Desktop or Cursor do.

import { type OAuthClientProvider, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { describe, expect, it } from "vitest";
import { seedCompany, seedIssue } from "../control/helpers";
import { asKey, createUser, generateKey, type Session } from "../helpers";
import { abortableDispatch, callTool, jsonOf, textOf } from "./client";
import { decide, MCP, REDIRECT_URI } from "./oauth-flow";

/** An app's OAuth state; its "browser" is the signed-in user, who allows `grant` on the consent page. */
class SignedInBrowserProvider implements OAuthClientProvider {
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = "";
  code: string | null = null;
  askedScopes: string | null = null;

  constructor(
    private readonly session: Session,
    private readonly grant: Record<string, string>,
  ) {}

  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "SDK Desktop",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(client: OAuthClientInformationMixed) {
    this.#client = client;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
  async redirectToAuthorization(url: URL) {
    this.askedScopes = url.searchParams.get("scope");
    const answer = await decide(this.session, url.toString(), { decision: "approve", ...this.grant });
    expect(answer.status, answer.html).toBe(302);
    this.code = answer.location?.searchParams.get("code") ?? null;
  }
}

const transportFor = (provider: OAuthClientProvider) =>
  new StreamableHTTPClientTransport(new URL(MCP), { authProvider: provider, fetch: abortableDispatch });

describe("/mcp with the SDK client's OAuth", () => {
  it("connects with just the URL: authorizes through the consent page, then reads as the user", async () => {
    const session = await createUser("OWNER");
    const key = await generateKey(session);
    const company = await seedCompany({ userId: session.userId, key, headers: asKey(key) });
    const issue = await seedIssue(company);
    const provider = new SignedInBrowserProvider(session, { scope_read: "on" });

    const first = transportFor(provider);
    await expect(new Client({ name: "sdk-oauth", version: "1" }).connect(first)).rejects.toThrow(
      UnauthorizedError,
    );
    expect(provider.code).not.toBeNull();
    await first.finishAuth(provider.code ?? "");
    expect(provider.tokens()?.scope).toBe("read");

    const client = new Client({ name: "sdk-oauth", version: "1" });
    await client.connect(transportFor(provider));
    expect(jsonOf(await callTool(client, "get_issue", { issueId: issue.identifier }))).toMatchObject({
      id: issue.id,
    });
    const refused = await callTool(client, "add_comment", { issueId: issue.identifier, body: "hi" });
    expect(textOf(refused)).toMatch(/^Refused: add_comment needs a key with the "control" scope/);
    await client.close();
  });
});
