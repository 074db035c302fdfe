// Issue 27's scoped keys over /mcp: a tool outside the key's scope is refused before anything runs,
// a key limited to one company reads no other, and an expired key answers 401 like a revoked one.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { boardUser, seedCompany, seedIssue } from "../control/helpers";
import { asKey, call, dispatch } from "../helpers";
import { eventually } from "../patience";
import { callTool, connect, MCP_URL, textOf } from "./client";

async function scopedKey(fullKey: string, body: Record<string, unknown>): Promise<string> {
  const res = await call<{ data: { key: string } }>("POST", "/api/user/keys", {
    headers: asKey(fullKey),
    body,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.key;
}

const issueRow = (id: string) =>
  env.DB.prepare("SELECT status, assignee_agent_id, assignee_user_id, updated_at FROM issues WHERE id = ?")
    .bind(id)
    .first();

describe("/mcp with scoped keys", () => {
  it("a read key calling checkout_issue gets a scope error naming `control`, and the issue is unchanged", async () => {
    const user = await boardUser();
    const company = await seedCompany(user);
    const issue = await seedIssue(company);
    const before = await issueRow(issue.id);
    const client = await connect({
      Authorization: `Bearer ${await scopedKey(user.key, { name: "r", scopes: ["read"] })}`,
    });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("checkout_issue");

    const result = await callTool(client, "checkout_issue", {
      issueId: issue.id,
      expectedStatuses: ["todo"],
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Refused: checkout_issue needs a key with the "control" scope/);
    expect(await issueRow(issue.id)).toEqual(before);
    const read = await callTool(client, "get_issue", { issueId: issue.id });
    expect(read.isError).toBeFalsy();
    await client.close();
  });

  it("a key limited to one company reads its issues and gets 404 for another company's", async () => {
    const user = await boardUser();
    const mine = await seedCompany(user);
    const other = await seedCompany(user);
    const myIssue = await seedIssue(mine);
    const theirIssue = await seedIssue(other);
    const key = await scopedKey(user.key, { name: "one", scopes: ["read"], companyId: mine.id });
    const client = await connect(asKey(key));
    expect((await callTool(client, "get_issue", { issueId: myIssue.identifier })).isError).toBeFalsy();
    const refused = await callTool(client, "get_issue", { issueId: theirIssue.identifier });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^HTTP 404/);
    await client.close();
  });

  it('an expired key answers 401 with error="invalid_token", like a revoked one', async () => {
    const user = await boardUser();
    const key = await scopedKey(user.key, {
      name: "brief",
      scopes: ["read"],
      expiresAt: new Date(Date.now() + 1_500).toISOString(),
    });
    const list = () =>
      dispatch(
        new Request(MCP_URL, {
          method: "POST",
          headers: {
            Authorization: `Bearer ${key}`,
            "Content-Type": "application/json",
            Accept: "application/json, text/event-stream",
          },
          // An initialize: the one message that needs no session, so only the key decides the status.
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: {
              protocolVersion: "2025-11-25",
              capabilities: {},
              clientInfo: { name: "t", version: "1" },
            },
          }),
        }),
      );
    expect((await list()).status).toBe(200);
    let answer: Response | undefined;
    await eventually(async () => {
      answer = await list();
      return answer.status === 401;
    });
    expect(answer?.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
  });

  it("a scoped key used only over /mcp shows when it was last used, as REST use does", async () => {
    const user = await boardUser();
    const company = await seedCompany(user);
    const issue = await seedIssue(company);
    const key = await scopedKey(user.key, { name: "mcp only", scopes: ["read"] });
    const lastUsedAt = async () => {
      const listed = await call<{ data: Array<{ name: string; lastUsedAt: string | null }> }>(
        "GET",
        "/api/user/keys",
        { headers: asKey(user.key) },
      );
      return listed.body.data.find((row) => row.name === "mcp only")?.lastUsedAt ?? null;
    };
    expect(await lastUsedAt()).toBeNull();
    const before = Date.now();
    const client = await connect(asKey(key));
    expect((await callTool(client, "get_issue", { issueId: issue.identifier })).isError).toBeFalsy();
    await client.close();
    let seen: string | null = null;
    await eventually(async () => {
      seen = await lastUsedAt();
      return seen !== null;
    });
    expect(Date.parse(seen ?? "")).toBeGreaterThanOrEqual(before - 1000);
  });
});
