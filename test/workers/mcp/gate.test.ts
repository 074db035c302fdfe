// The key check at /mcp's door, as a client meets it: a revoked key is refused on its very next
// request, whatever the isolate remembered of it a moment before (bench/mcp.mjs: the door answers
// from the isolate's recent key reads, as REST reads do; revoking a key forgets them).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { seedIssue, seedTenant } from "../control/helpers";
import { BASE, call, dispatch } from "../helpers";

const post = (headers: Record<string, string>, body: Record<string, unknown>) =>
  dispatch(
    new Request(`${BASE}/mcp`, {
      method: "POST",
      headers: {
        ...headers,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...body }),
    }),
  );

/** The key's session: the id its initialize was answered with, sent on every later message. */
const sessions = new Map<string, string>();

async function sessionOf(headers: Record<string, string>): Promise<Record<string, string>> {
  const key = JSON.stringify(headers);
  let id = sessions.get(key);
  if (id === undefined) {
    const answer = await post(headers, {
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "gate", version: "1" } },
    });
    expect(answer.status).toBe(200);
    await answer.text();
    id = answer.headers.get("mcp-session-id") ?? "";
    sessions.set(key, id);
  }
  return { ...headers, "Mcp-Session-Id": id, "MCP-Protocol-Version": "2025-11-25" };
}

const rpc = async (headers: Record<string, string>, method: string, params: Record<string, unknown>) => {
  const answer = await post(await sessionOf(headers), { method, params });
  await answer.clone().text();
  return answer;
};

const issueRow = (id: string) =>
  env.DB.prepare("SELECT status, assignee_agent_id FROM issues WHERE id = ?").bind(id).first();

describe("/mcp key check", () => {
  it("a key revoked right after a successful call answers 401 on its next request and runs nothing", async () => {
    const { board, company, agent } = await seedTenant();
    const issue = await seedIssue(company);
    const read = await rpc(agent.headers, "tools/call", {
      name: "get_issue",
      arguments: { issueId: issue.id },
    });
    expect(read.status).toBe(200);
    expect(await rpc(agent.headers, "ping", {}).then((r) => r.status)).toBe(200);

    const keys = await call<Array<{ id: string }>>("GET", `/api/agents/${agent.id}/keys`, {
      headers: board.headers,
    });
    const revoked = await call("DELETE", `/api/agents/${agent.id}/keys/${keys.body[0]?.id}`, {
      headers: board.headers,
    });
    expect(revoked.status).toBe(200);

    const before = await issueRow(issue.id);
    for (const [method, params] of [
      ["ping", {}],
      ["tools/list", {}],
      [
        "tools/call",
        { name: "checkout_issue", arguments: { issueId: issue.id, expectedStatuses: ["todo"] } },
      ],
    ] as const) {
      const refused = await rpc(agent.headers, method, params);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    }
    expect(await issueRow(issue.id)).toEqual(before);
  });

  it("the same for a user API key revoked by its owner", async () => {
    const { board, company } = await seedTenant();
    const issue = await seedIssue(company);
    const comment = { name: "add_comment", arguments: { issueId: issue.id, body: "after revocation" } };
    expect(
      await rpc(board.headers, "tools/call", { name: "get_issue", arguments: { issueId: issue.id } }).then(
        (r) => r.status,
      ),
    ).toBe(200);
    expect((await call("DELETE", "/api/user/api-key", { headers: board.headers })).status).toBe(200);
    const refused = await rpc(board.headers, "tools/call", comment);
    expect(refused.status).toBe(401);
    const comments = await env.DB.prepare("SELECT id FROM issue_comments WHERE issue_id = ?")
      .bind(issue.id)
      .all();
    expect(comments.results).toEqual([]);
  });
});
