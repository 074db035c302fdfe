// OAuth for browser-based MCP clients (issue 27): a client that only speaks the MCP authorization spec
// finds the authorization server from /mcp's 401, registers, sends the signed-in user through the
// dashboard's consent page, and uses the token on /mcp with exactly the grant the user chose.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type BoardUser, seedCompany, seedIssue } from "../control/helpers";
import { asKey, asSession, call, createUser, generateKey, rootSession, type Session } from "../helpers";
import { callTool, textOf } from "./client";
import {
  authorizeUrl,
  connectApp,
  connectWithToken,
  consentPage,
  decide,
  discover,
  exchangeCode,
  fetchAt,
  hiddenField,
  MCP,
  ORIGIN,
  pkce,
  postMcp,
  REDIRECT_URI,
  register,
  tokenRequest,
} from "./oauth-flow";

/** A signed-in owner with a key (to seed companies as them). */
async function owner(): Promise<{ session: Session; me: BoardUser }> {
  const session = await createUser("OWNER");
  const key = await generateKey(session);
  return { session, me: { userId: session.userId, key, headers: asKey(key) } };
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

const LIST = { jsonrpc: "2.0", id: 2, method: "tools/list" };

async function readToEnd(body: ReadableStream<Uint8Array>): Promise<void> {
  for await (const _chunk of body) {
    // drained until the server closes it
  }
}

/** An MCP session opened with the token, and its GET stream being read until the server closes it. */
async function openStream(accessToken: string): Promise<{ sessionId: string; reading: Promise<void> }> {
  const opened = await postMcp(bearer(accessToken));
  expect(opened.status).toBe(200);
  await opened.text();
  const sessionId = opened.headers.get("mcp-session-id") ?? "";
  const stream = await fetchAt(MCP, {
    method: "GET",
    headers: {
      ...bearer(accessToken),
      "Mcp-Session-Id": sessionId,
      "MCP-Protocol-Version": "2025-11-25",
      Accept: "text/event-stream",
    },
  });
  expect(stream.status).toBe(200);
  return { sessionId, reading: readToEnd(stream.body as ReadableStream<Uint8Array>) };
}

describe("/mcp OAuth", () => {
  it("discovery: the 401 names the resource metadata, which names this Worker's authorization server", async () => {
    const { challenge, metadataUrl, resource, server } = await discover();
    expect(challenge).toMatch(/^Bearer realm="switchboard", /);
    expect(metadataUrl).toBe(`${ORIGIN}/.well-known/oauth-protected-resource/mcp`);
    expect(resource).toMatchObject({ resource: MCP, authorization_servers: [ORIGIN] });
    expect(resource.scopes_supported).toEqual(["read", "send", "control", "admin"]);
    expect(
      (await (await fetchAt(`${ORIGIN}/.well-known/oauth-protected-resource`)).json()) as object,
    ).toEqual(resource);
    expect(server).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/oauth/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
      code_challenge_methods_supported: ["S256"],
    });
  });

  it("a read grant: the SDK client reads with the token, a send tool is refused by scope, another tenant's issue is 404", async () => {
    const { session, me } = await owner();
    const mine = await seedCompany(me);
    const myIssue = await seedIssue(mine);
    const stranger = await owner();
    const theirIssue = await seedIssue(await seedCompany(stranger.me));

    const { tokens } = await connectApp(session, { scope_read: "on" });
    expect(tokens).toMatchObject({ token_type: "bearer", scope: "read", expires_in: 3600 });
    const client = await connectWithToken(tokens.access_token);
    const read = await callTool(client, "get_issue", { issueId: myIssue.identifier });
    expect(read.isError, textOf(read)).toBeFalsy();
    expect(JSON.parse(textOf(read))).toMatchObject({ id: myIssue.id });

    const send = await callTool(client, "send_text", {
      sessionId: "any",
      jid: "15551234567@s.whatsapp.net",
      text: "hi",
    });
    expect(send.isError).toBe(true);
    expect(textOf(send)).toMatch(
      /^Refused: send_text needs a key with the "send" scope; this key has: read\./,
    );

    // The token is for /mcp only: the REST API takes it for no key.
    for (const headers of [asKey(tokens.access_token), bearer(tokens.access_token)])
      expect((await call("GET", "/api/companies", { headers })).status).toBe(401);

    const foreign = await callTool(client, "get_issue", { issueId: theirIssue.identifier });
    expect(foreign.isError).toBe(true);
    expect(textOf(foreign)).toMatch(/^HTTP 404/);
    await client.close();
  });

  it("resources through the token: an issue reads and can be subscribed to; another tenant's cannot", async () => {
    const { session, me } = await owner();
    const issue = await seedIssue(await seedCompany(me), { title: "Watched by an app" });
    const stranger = await owner();
    const theirs = await seedIssue(await seedCompany(stranger.me));
    const { tokens } = await connectApp(session);
    const client = await connectWithToken(tokens.access_token);
    const uri = `issue://${issue.identifier}`;
    expect(JSON.stringify((await client.readResource({ uri })).contents)).toContain("Watched by an app");
    await client.subscribeResource({ uri });
    await expect(client.subscribeResource({ uri: `issue://${theirs.identifier}` })).rejects.toThrow(
      /not found/,
    );
    await client.close();
  });

  it("a grant limited to one company reaches only that company, like a key limited to it", async () => {
    const { session, me } = await owner();
    const mine = await seedCompany(me);
    const other = await seedCompany(me);
    const inside = await seedIssue(mine);
    const outside = await seedIssue(other);
    const { tokens } = await connectApp(session, { scope_read: "on", limit: `company:${mine.id}` });
    const client = await connectWithToken(tokens.access_token);
    expect((await callTool(client, "get_issue", { issueId: inside.identifier })).isError).toBeFalsy();
    const refused = await callTool(client, "get_issue", { issueId: outside.identifier });
    expect(textOf(refused)).toMatch(/^HTTP 404/);
    await client.close();
  });

  it("a grant limited to one WhatsApp session lists only it; the user's other session is 404", async () => {
    const { session, me } = await owner();
    const created = async (name: string) =>
      (
        await call<{ data: { sessionId: string } }>("POST", "/api/sessions", {
          body: { name },
          headers: me.headers,
        })
      ).body.data.sessionId;
    const [kept, other] = [await created("kept"), await created("other")];
    const { tokens } = await connectApp(session, { scope_read: "on", limit: `session:${kept}` });
    const client = await connectWithToken(tokens.access_token);
    const listed = JSON.parse(textOf(await callTool(client, "list_sessions"))) as {
      sessions: { sessionId: string }[];
    };
    expect(listed.sessions.map((s) => s.sessionId)).toEqual([kept]);
    const refused = await callTool(client, "list_chats", { sessionId: other });
    expect(textOf(refused)).toMatch(/^HTTP 404/);
    await client.close();
  });

  it("the consent page shows the app and the requested scopes; a company that is not the user's is refused", async () => {
    const { session } = await owner();
    const stranger = await owner();
    const theirs = await seedCompany(stranger.me);
    const { server } = await discover();
    const clientId = await register(server, "Claude Desktop");
    const { challenge } = await pkce();
    const url = authorizeUrl(server, clientId, challenge);
    const page = await consentPage(session, url);
    expect(page.status).toBe(200);
    expect(page.html).toContain("Claude Desktop wants to use Switchboard as you");
    expect(page.html).toContain("127.0.0.1");
    // The form's redirect goes to the app: the page's CSP lets the form send the browser there.
    const headers = (await fetchAt(url, { headers: { cookie: session.cookie } })).headers;
    expect(headers.get("Content-Security-Policy")).toContain("form-action 'self' http://127.0.0.1:33418;");
    const refused = await decide(session, url, {
      decision: "approve",
      scope_read: "on",
      limit: `company:${theirs.id}`,
    });
    expect(refused.status).toBe(400);
    expect(refused.location).toBeNull();
    expect(refused.html).toContain("There is no such company of yours.");
    const none = await decide(session, url, { decision: "approve" });
    expect(none.status).toBe(400);
    expect(none.html).toContain("Choose at least one scope.");
  });

  it("not signed in: the consent page sends the browser through the sign-in and back", async () => {
    const { server } = await discover();
    const clientId = await register(server);
    const { challenge } = await pkce();
    const url = authorizeUrl(server, clientId, challenge);
    const response = await fetchAt(url);
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get("Location") ?? "", ORIGIN);
    expect(location.pathname).toBe("/login");
    expect(location.searchParams.get("next")).toBe(url.slice(ORIGIN.length));
  });

  it("deny: back to the app with error=access_denied and its state, and no token", async () => {
    const { session } = await owner();
    const { server } = await discover();
    const clientId = await register(server);
    const { challenge } = await pkce();
    const denied = await decide(session, authorizeUrl(server, clientId, challenge), { decision: "deny" });
    expect(denied.status).toBe(302);
    expect(`${denied.location?.origin}${denied.location?.pathname}`).toBe(REDIRECT_URI);
    expect(denied.location?.searchParams.get("error")).toBe("access_denied");
    expect(denied.location?.searchParams.get("state")).toBe("state-123");
    expect(denied.location?.searchParams.get("code")).toBeNull();
  });

  it("PKCE: plain and none are refused at the consent page; a wrong verifier is invalid_grant; a code works once", async () => {
    const { session } = await owner();
    const { server } = await discover();
    const clientId = await register(server);
    const { verifier, challenge } = await pkce();
    const plain = await consentPage(
      session,
      authorizeUrl(server, clientId, verifier, { code_challenge_method: "plain" }),
    );
    expect(plain.status).toBe(400);
    const without = authorizeUrl(server, clientId, challenge).replace(
      /&code_challenge=[^&]*&code_challenge_method=S256/,
      "",
    );
    expect((await consentPage(session, without)).status).toBe(400);

    const approved = await decide(session, authorizeUrl(server, clientId, challenge), {
      decision: "approve",
      scope_read: "on",
    });
    const code = approved.location?.searchParams.get("code") ?? "";
    const wrong = await exchangeCode(server, clientId, code, (await pkce()).verifier);
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: "invalid_grant" });

    const second = await decide(session, authorizeUrl(server, clientId, challenge), {
      decision: "approve",
      scope_read: "on",
    });
    const again = second.location?.searchParams.get("code") ?? "";
    expect((await exchangeCode(server, clientId, again, verifier)).status).toBe(200);
    const reused = await exchangeCode(server, clientId, again, verifier);
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("an unknown token answers 401 with the challenge and the resource metadata", async () => {
    for (const token of ["nobody:nothing:secret", "not-a-key"]) {
      const refused = await postMcp(bearer(token));
      expect(refused.status).toBe(401);
      expect(refused.headers.get("WWW-Authenticate")).toBe(
        `Bearer realm="switchboard", error="invalid_token", error_description="invalid or revoked key", resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`,
      );
    }
  });

  it("an expired access token answers 401 with the challenge; tokens are stored hashed, never as issued", async () => {
    const { session } = await owner();
    const { tokens } = await connectApp(session);
    const stored = await env.OAUTH_KV.list({ prefix: `token:${session.userId}:` });
    expect(stored.keys.length).toBe(1);
    for (const secret of [tokens.access_token, tokens.refresh_token]) {
      const tail = secret.split(":")[2] ?? "";
      for (const { name } of (await env.OAUTH_KV.list()).keys) {
        expect(name).not.toContain(tail);
        expect((await env.OAUTH_KV.get(name)) ?? "").not.toContain(tail);
      }
    }
    // An hour passes: the record's expiry is what the library checks.
    const name = stored.keys[0]?.name ?? "";
    const record = (await env.OAUTH_KV.get(name, "json")) as { expiresAt: number };
    await env.OAUTH_KV.put(name, JSON.stringify({ ...record, expiresAt: Math.floor(Date.now() / 1000) - 1 }));
    const refused = await postMcp(bearer(tokens.access_token));
    expect(refused.status).toBe(401);
    expect(refused.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    expect(refused.headers.get("WWW-Authenticate")).toContain(
      `resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`,
    );
  });

  it("refresh: a new access token works in the same MCP session, and the refresh token rotates", async () => {
    const { session } = await owner();
    const { tokens, clientId, server } = await connectApp(session);
    const opened = await postMcp(bearer(tokens.access_token));
    await opened.text();
    const sessionId = opened.headers.get("mcp-session-id") ?? "";
    const refreshed = await tokenRequest(server, {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
    const renewed = (await refreshed.json()) as { access_token: string; refresh_token: string };
    expect(renewed.access_token).not.toBe(tokens.access_token);
    expect(renewed.refresh_token).not.toBe(tokens.refresh_token);
    // The session belongs to the grant, not to one access token: an hourly refresh keeps it.
    const inSession = {
      ...bearer(renewed.access_token),
      "Mcp-Session-Id": sessionId,
      "MCP-Protocol-Version": "2025-11-25",
    };
    const listed = await postMcp(inSession, { jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain("get_issue");
    const written = await postMcp(inSession, {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "add_comment", arguments: { issueId: "ACM-1", body: "x" } },
    });
    expect(written.status).toBe(200);
    expect(await written.text()).toContain("Refused: add_comment");
  });

  it("Connected apps: listed on the API key page; Revoke answers 401 at once and closes the app's open stream", async () => {
    const { session } = await owner();
    const { tokens } = await connectApp(session, { scope_read: "on" }, "Cursor");
    const { sessionId, reading } = await openStream(tokens.access_token);

    const page = await (await fetchAt(`${ORIGIN}/api-key`, { headers: { cookie: session.cookie } })).text();
    expect(page).toContain("Connected apps");
    expect(page).toContain("<td>Cursor</td>");
    const revoke = page.match(/action="(\/api-key\/apps\/[^"]+\/revoke)"/)?.[1] ?? "";
    expect(revoke).not.toBe("");
    const revoked = await fetchAt(`${ORIGIN}${revoke}`, {
      method: "POST",
      headers: { cookie: session.cookie, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: hiddenField(page, "_csrf") }),
    });
    expect(revoked.status).toBe(303);
    await reading;
    const after = await postMcp({ ...bearer(tokens.access_token), "Mcp-Session-Id": sessionId }, LIST);
    expect(after.status).toBe(401);
    expect(after.headers.get("WWW-Authenticate")).toContain("resource_metadata=");
    const listed = await (await fetchAt(`${ORIGIN}/api-key`, { headers: { cookie: session.cookie } })).text();
    expect(listed).not.toContain("<td>Cursor</td>");
    expect(listed).toContain("No connected apps.");
  });

  it("another user cannot revoke an app that is not theirs (404), and it keeps working", async () => {
    const { session } = await owner();
    const { tokens } = await connectApp(session);
    const intruder = await owner();
    const grantId = tokens.access_token.split(":")[1] ?? "";
    const page = await (
      await fetchAt(`${ORIGIN}/api-key`, { headers: { cookie: intruder.session.cookie } })
    ).text();
    const refused = await fetchAt(`${ORIGIN}/api-key/apps/${encodeURIComponent(grantId)}/revoke`, {
      method: "POST",
      headers: { cookie: intruder.session.cookie, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: hiddenField(page, "_csrf") }),
    });
    expect(refused.status).toBe(404);
    const still = await postMcp(bearer(tokens.access_token));
    expect(still.status).toBe(200);
    await still.text();
  });

  it("a deleted user's token answers 401 and the app's open stream closes", async () => {
    const { session } = await owner();
    const { tokens } = await connectApp(session);
    const { sessionId, reading } = await openStream(tokens.access_token);
    const root = await rootSession();
    expect((await call("DELETE", `/api/users/${session.userId}`, { headers: asSession(root) })).status).toBe(
      200,
    );
    await reading;
    const after = await postMcp({ ...bearer(tokens.access_token), "Mcp-Session-Id": sessionId }, LIST);
    expect(after.status).toBe(401);
  });
});
