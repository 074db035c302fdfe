// /mcp over real HTTP against the served stack (`npm start`: workerd, D1, Durable Objects), driven by
// the official SDK client's Streamable HTTP transport: initialize, list, call, a tool call whose SSE
// stream is cut and resumed (Last-Event-ID), and DELETE ending the session.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient } from "../support/api.ts";
import { firstEventOnly } from "../support/sse-cut.ts";
import { type Stack, startStack } from "../support/stack.ts";

let stack: Stack;
let admin: ApiClient;
let agentKey: string;
let issue: { id: string; identifier: string };

async function create<T>(path: string, body: unknown): Promise<T> {
  const { status, body: created } = await admin.call<T>("POST", path, body);
  if (status !== 200 && status !== 201) throw new Error(`POST ${path}: ${status} ${JSON.stringify(created)}`);
  return created;
}

const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");

beforeAll(async () => {
  stack = await startStack({ env: { BRIDGE: "0", RUNNER: "0" } });
  admin = await adminClient(stack.baseUrl);
  const company = await create<{ id: string }>("/api/companies", { name: `MCP ${Date.now()}` });
  const agent = await create<{ id: string }>(`/api/companies/${company.id}/agents`, {
    name: "Remote",
    role: "engineer",
    adapterType: "coder_local",
  });
  agentKey = (await create<{ token: string }>(`/api/agents/${agent.id}/keys`, {})).token;
  issue = await create(`/api/companies/${company.id}/issues`, { title: "Over MCP", status: "todo" });
});

afterAll(async () => {
  await stack?.stop();
});

describe("/mcp over HTTP on the served stack", () => {
  it("initializes, lists, calls tools, resumes a cut stream and ends the session", async () => {
    const resumedFrom: string[] = [];
    let cutNextToolCall = false;
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${agentKey}` } },
      fetch: async (url, init) => {
        const lastEventId = new Headers(init?.headers).get("last-event-id");
        if (lastEventId) resumedFrom.push(lastEventId);
        const response = await fetch(url, init);
        const isToolCall = typeof init?.body === "string" && init.body.includes('"tools/call"');
        if (!cutNextToolCall || !isToolCall || !response.body) return response;
        cutNextToolCall = false;
        return new Response(firstEventOnly(response.body), response);
      },
    });
    const client = new Client({ name: "switchboard-e2e", version: "1.0.0" });
    await client.connect(transport);
    const sessionId = transport.sessionId ?? "";
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("checkout_issue");
    const checkout = (await client.callTool({
      name: "checkout_issue",
      arguments: { issueId: issue.identifier, expectedStatuses: ["todo"] },
    })) as CallToolResult;
    expect(checkout.isError).toBeFalsy();

    // A read is answered as one JSON body; a write streams, and a cut stream is resumed.
    const read = (await client.callTool({
      name: "get_issue",
      arguments: { issueId: issue.id },
    })) as CallToolResult;
    expect(JSON.parse(textOf(read))).toMatchObject({ id: issue.id, status: "in_progress" });

    cutNextToolCall = true;
    const commented = (await client.callTool({
      name: "add_comment",
      arguments: { issueId: issue.id, body: "written through a cut stream" },
    })) as CallToolResult;
    expect(JSON.parse(textOf(commented))).toMatchObject({ body: "written through a cut stream" });
    expect(resumedFrom).toHaveLength(1);
    const comments = await fetch(`${stack.baseUrl}/api/issues/${issue.id}/comments`, {
      headers: { Authorization: `Bearer ${agentKey}` },
    });
    expect(
      ((await comments.json()) as Array<{ body: string }>).filter(
        (comment) => comment.body === "written through a cut stream",
      ),
    ).toHaveLength(1);

    await transport.terminateSession();
    const after = await fetch(`${stack.baseUrl}/mcp`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${agentKey}`,
        "Mcp-Session-Id": sessionId,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
    });
    expect(after.status).toBe(404);
    await client.close();
  });
});
