// /mcp's OAuth over real HTTP on the served stack (`npm start`, http on 127.0.0.1: a loopback origin,
// where OAuth 2.1 allows http): the official SDK client's own OAuth support connects with just the
// URL, the "browser" being a signed-in admin who allows a read grant on the consent page.
import { type OAuthClientProvider, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, type ApiClient, adminClient } from "../support/api.ts";
import { type Stack, startStack } from "../support/stack.ts";

const REDIRECT_URI = "http://127.0.0.1:33418/callback";
let stack: Stack;
let admin: ApiClient;
let cookie: string;

const unescapeHtml = (text: string) => text.replace(/&quot;/g, '"').replace(/&amp;/g, "&");
const hidden = (html: string, name: string) =>
  unescapeHtml(html.match(new RegExp(`name="${name}" value="([^"]*)"`))?.[1] ?? "");

/** The app's OAuth state; its browser is the signed-in admin, who allows read on the consent page. */
class ConsentingBrowser implements OAuthClientProvider {
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = "";
  code = "";
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "E2E Desktop", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" };
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
    const page = await fetch(url, { headers: { cookie }, redirect: "manual" });
    const html = await page.text();
    expect(page.status, html).toBe(200);
    expect(html).toContain("E2E Desktop wants to use Switchboard as you");
    const answer = await fetch(`${stack.baseUrl}/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        _csrf: hidden(html, "_csrf"),
        request: hidden(html, "request"),
        decision: "approve",
        scope_read: "on",
      }),
    });
    expect(answer.status).toBe(302);
    this.code = new URL(answer.headers.get("location") ?? "").searchParams.get("code") ?? "";
  }
}

beforeAll(async () => {
  stack = await startStack({ env: { BRIDGE: "0", RUNNER: "0" } });
  admin = await adminClient(stack.baseUrl);
  const login = await fetch(`${stack.baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(ADMIN),
  });
  cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
});

afterAll(async () => {
  await stack?.stop();
});

describe("/mcp OAuth over HTTP on the served stack", () => {
  it("the SDK client connects with just the URL and reads as the user with the grant they chose", async () => {
    const company = await admin.call<{ id: string }>("POST", "/api/companies", {
      name: `OAuth ${Date.now()}`,
    });
    const issue = await admin.call<{ identifier: string }>(
      "POST",
      `/api/companies/${company.body.id}/issues`,
      {
        title: "Read through OAuth",
        status: "todo",
      },
    );
    const browser = new ConsentingBrowser();
    const url = new URL(`${stack.baseUrl}/mcp`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: browser });
    await expect(new Client({ name: "e2e-oauth", version: "1" }).connect(first)).rejects.toThrow(
      UnauthorizedError,
    );
    await first.finishAuth(browser.code);

    const client = new Client({ name: "e2e-oauth", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: browser }));
    const read = (await client.callTool({
      name: "get_issue",
      arguments: { issueId: issue.body.identifier },
    })) as CallToolResult;
    expect(read.isError).toBeFalsy();
    expect(JSON.stringify(read.content)).toContain("Read through OAuth");
    const refused = (await client.callTool({
      name: "add_comment",
      arguments: { issueId: issue.body.identifier, body: "no" },
    })) as CallToolResult;
    expect(JSON.stringify(refused.content)).toContain('needs a key with the \\"control\\" scope');
    await client.close();
  });
});
