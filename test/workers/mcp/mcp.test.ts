// /mcp driven by the official MCP SDK client over Streamable HTTP, in workerd: its requests go through
// the Worker's own fetch (dispatch), and what the tools did is read back from D1 and the REST API.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import {
  type BoardUser,
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  seedIssue,
  seedTwoTenants,
} from "../control/helpers";
import { call, dispatch } from "../helpers";
import { callTool, connect, MCP_URL, textOf } from "./client";

/** A raw initialize (no SDK client): the session id it answers with. */
async function initializeRaw(headers: Record<string, string>): Promise<string> {
  const response = await dispatch(
    new Request(MCP_URL, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      }),
    }),
  );
  expect(response.status).toBe(200);
  await response.text();
  return response.headers.get("mcp-session-id") ?? "";
}

const issueRow = (id: string) =>
  env.DB.prepare("SELECT status, assignee_agent_id, updated_at FROM issues WHERE id = ?")
    .bind(id)
    .first<{ status: string; assignee_agent_id: string | null; updated_at: number }>();

const commentsOf = async (id: string) =>
  (
    await env.DB.prepare(
      "SELECT body, author_agent_id FROM issue_comments WHERE issue_id = ? ORDER BY created_at",
    )
      .bind(id)
      .all<{ body: string; author_agent_id: string | null }>()
  ).results;

describe("/mcp", () => {
  let owner: BoardUser;
  let company: SeededCompany;
  let agent: SeededAgent;
  let rival: SeededAgent;
  let other: SeededCompany;

  beforeAll(async () => {
    const tenants = await seedTwoTenants();
    ({ owner, company, agent, other } = tenants);
    rival = await seedAgent(company.id, { name: `Rival ${crypto.randomUUID().slice(0, 6)}` });
  });

  it("initializes and lists the control-plane tools with their input schemas", async () => {
    const client = await connect(agent.headers);
    expect(client.getServerVersion()?.name).toBe("switchboard");
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    // Other domains' tools are listed too (whatsapp-read.test.ts, …); these are the control plane's.
    expect([...byName.keys()]).toEqual(
      expect.arrayContaining(["add_comment", "checkout_issue", "get_issue", "me", "update_issue"]),
    );
    for (const tool of tools) expect(tool.description?.length ?? 0).toBeGreaterThan(20);
    expect(byName.get("get_issue")?.inputSchema.required).toEqual(["issueId"]);
    expect(byName.get("checkout_issue")?.inputSchema.required).toEqual(["issueId", "expectedStatuses"]);
    // The REST body schema's fields, not a hand-written subset.
    expect(Object.keys(byName.get("update_issue")?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(["issueId", "status", "comment", "priority", "blockedByIssueIds"]),
    );
    expect(byName.get("add_comment")?.inputSchema.required).toEqual(["issueId", "body"]);
    await client.close();
  });

  it("me answers the calling agent, as GET /api/agents/me does", async () => {
    const client = await connect(agent.headers);
    const result = await callTool(client, "me");
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(textOf(result))).toMatchObject({
      id: agent.id,
      companyId: company.id,
      name: agent.name,
    });
    await client.close();
  });

  it("an agent checks out, comments and finishes an issue through tools; a second agent's checkout names the holder", async () => {
    const issue = await seedIssue(company, { title: "Ship the MCP slice" });
    const client = await connect(agent.headers);

    const checkout = await callTool(client, "checkout_issue", {
      issueId: issue.identifier,
      expectedStatuses: ["todo"],
    });
    expect(checkout.isError).toBeFalsy();
    expect(await issueRow(issue.id)).toMatchObject({ status: "in_progress", assignee_agent_id: agent.id });

    const rivalClient = await connect(rival.headers);
    const before = await issueRow(issue.id);
    const refused = await callTool(rivalClient, "checkout_issue", {
      issueId: issue.id,
      expectedStatuses: ["todo"],
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("HTTP 409");
    expect(textOf(refused)).toContain(agent.name);
    expect(textOf(refused)).toContain("Do not retry");
    expect(await issueRow(issue.id)).toEqual(before);
    await rivalClient.close();

    const comment = await callTool(client, "add_comment", {
      issueId: issue.id,
      body: "Started on the transport.",
    });
    expect(comment.isError).toBeFalsy();
    const done = await callTool(client, "update_issue", {
      issueId: issue.id,
      status: "done",
      comment: "Shipped.",
      dueDate: "2026-12-24",
    });
    expect(done.isError).toBeFalsy();

    expect((await issueRow(issue.id))?.status).toBe("done");
    expect(await commentsOf(issue.id)).toEqual([
      { body: "Started on the transport.", author_agent_id: agent.id },
      { body: "Shipped.", author_agent_id: agent.id },
    ]);
    const read = await call<{ status: string; dueDate: string | null }>("GET", `/api/issues/${issue.id}`, {
      headers: owner.headers,
    });
    expect(read.body.status).toBe("done");
    expect(read.body.dueDate).toBe("2026-12-24");
    const viaTool = await callTool(client, "get_issue", { issueId: issue.identifier });
    expect(JSON.parse(textOf(viaTool))).toMatchObject({ id: issue.id, status: "done" });
    await client.close();
  });

  it("bad arguments answer a clear tool error and change nothing", async () => {
    const issue = await seedIssue(company);
    const before = await issueRow(issue.id);
    const client = await connect(agent.headers);

    const unknownStatus = await callTool(client, "update_issue", { issueId: issue.id, status: "finished" });
    expect(unknownStatus.isError).toBe(true);
    expect(textOf(unknownStatus)).toMatch(/status/);

    const misspelt = await callTool(client, "add_comment", { issueId: issue.id, text: "hello" });
    expect(misspelt.isError).toBe(true);
    expect(textOf(misspelt)).toMatch(/body|text/);

    // Valid arguments the REST rules refuse: the API's own error text comes back.
    const skip = await callTool(client, "update_issue", { issueId: issue.id, status: "done" });
    expect(skip.isError).toBe(true);
    expect(textOf(skip)).toContain("HTTP 422");

    expect(await issueRow(issue.id)).toEqual(before);
    expect(await commentsOf(issue.id)).toEqual([]);
    await client.close();
  });

  it("another company's issue is not found", async () => {
    const theirs = await seedIssue(other);
    const client = await connect(agent.headers);
    const read = await callTool(client, "get_issue", { issueId: theirs.id });
    expect(read.isError).toBe(true);
    expect(textOf(read)).toContain("HTTP 404");
    const checkout = await callTool(client, "checkout_issue", {
      issueId: theirs.id,
      expectedStatuses: ["todo"],
    });
    expect(checkout.isError).toBe(true);
    expect(textOf(checkout)).toContain("HTTP 404");
    expect((await issueRow(theirs.id))?.status).toBe("todo");
    await client.close();
  });

  it("a user API key works too, as X-API-Key or a Bearer token", async () => {
    const issue = await seedIssue(company);
    for (const headers of [owner.headers, { Authorization: `Bearer ${owner.key}` }]) {
      const client = await connect(headers);
      const read = await callTool(client, "get_issue", { issueId: issue.identifier });
      expect(JSON.parse(textOf(read))).toMatchObject({ id: issue.id });
      await client.close();
    }
  });

  it("a missing or invalid key answers 401 with a Bearer challenge and runs nothing", async () => {
    const issue = await seedIssue(company);
    const toolCall = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "add_comment", arguments: { issueId: issue.id, body: "sneaky" } },
    });
    const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
    const missing = await dispatch(new Request(MCP_URL, { method: "POST", headers, body: toolCall }));
    expect(missing.status).toBe(401);
    expect(missing.headers.get("WWW-Authenticate")).toMatch(/^Bearer /);
    const invalid = await dispatch(
      new Request(MCP_URL, {
        method: "POST",
        headers: { ...headers, Authorization: `Bearer swa_${"x".repeat(45)}` },
        body: toolCall,
      }),
    );
    expect(invalid.status).toBe(401);
    expect(invalid.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    expect(await commentsOf(issue.id)).toEqual([]);
    await expect(connect({})).rejects.toThrow(/Missing key/);
  });

  it("a user key reaching an agents-only tool gets the API's 403 as a tool error", async () => {
    const client = await connect(owner.headers);
    const result = await callTool(client, "me");
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("HTTP 403");
    await client.close();
  });

  it("an unsupported MCP-Protocol-Version answers 400; a notification answers 202", async () => {
    const headers = {
      ...agent.headers,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    };
    const sessionId = await initializeRaw(headers);
    const list = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    const wrongVersion = await dispatch(
      new Request(MCP_URL, {
        method: "POST",
        headers: { ...headers, "Mcp-Session-Id": sessionId, "MCP-Protocol-Version": "1999-01-01" },
        body: list,
      }),
    );
    expect(wrongVersion.status).toBe(400);
    expect(await wrongVersion.text()).toContain("Unsupported protocol version");
    const notification = await dispatch(
      new Request(MCP_URL, {
        method: "POST",
        headers: { ...headers, "Mcp-Session-Id": sessionId },
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      }),
    );
    expect(notification.status).toBe(202);
  });

  it("GET opens the session's event stream and DELETE ends the session; without a session id both answer 400", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await dispatch(
        new Request(MCP_URL, { method, headers: { ...agent.headers, Accept: "text/event-stream" } }),
      );
      expect(response.status).toBe(400);
      expect(await response.text()).toContain("Mcp-Session-Id");
    }
    const sessionId = await initializeRaw({
      ...agent.headers,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    });
    const inSession = { ...agent.headers, "Mcp-Session-Id": sessionId, Accept: "text/event-stream" };
    const stream = await dispatch(new Request(MCP_URL, { method: "GET", headers: inSession }));
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    await stream.body?.cancel();
    const ended = await dispatch(new Request(MCP_URL, { method: "DELETE", headers: inSession }));
    expect(ended.status).toBe(200);
    const after = await dispatch(new Request(MCP_URL, { method: "GET", headers: inSession }));
    expect(after.status).toBe(404);
  });
});
