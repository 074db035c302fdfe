// Reads answered in the Worker (workers/mcp/direct.ts): a request that changes nothing is answered as
// JSON once the session object confirms the session is this key's; writes keep the session's SSE
// transport. What a client can tell: the answer's content type, that every answer is its own, that an
// ended session's reads get 404 like everything else, and that the read is still in the activity log.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import {
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  seedIssue,
  seedTwoTenants,
} from "../control/helpers";
import { dispatch } from "../helpers";
import { eventually } from "../patience";
import { MCP_URL } from "./client";

const VERSION = "2025-11-25";

const post = (headers: Record<string, string>, message: unknown) =>
  dispatch(
    new Request(MCP_URL, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        ...headers,
      },
      body: JSON.stringify(message),
    }),
  );

/** A raw session: initialize, then every later request carries its id and the protocol version. */
async function openSession(headers: Record<string, string>): Promise<Record<string, string>> {
  const opened = await post(headers, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  expect(opened.status).toBe(200);
  await opened.text();
  const sessionId = opened.headers.get("mcp-session-id") ?? "";
  expect(sessionId).not.toBe("");
  return { ...headers, "Mcp-Session-Id": sessionId, "MCP-Protocol-Version": VERSION };
}

const toolCall = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

interface ToolAnswer {
  id: number;
  result?: { isError?: boolean; content: Array<{ type: string; text: string }> };
  error?: { code: number; message: string };
}

async function jsonAnswerOf(response: Response): Promise<ToolAnswer> {
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("application/json");
  return (await response.json()) as ToolAnswer;
}

const answerText = (answer: ToolAnswer) => answer.result?.content[0]?.text ?? "";

describe("/mcp reads answered directly", () => {
  let company: SeededCompany;
  let agent: SeededAgent;
  let rival: SeededAgent;

  beforeAll(async () => {
    ({ company, agent } = await seedTwoTenants());
    rival = await seedAgent(company.id);
  });

  it("a read-only tool answers as JSON with the session id; a write still answers as an SSE stream", async () => {
    const session = await openSession(agent.headers);
    const read = await post(session, toolCall(3, "me"));
    expect(read.headers.get("mcp-session-id")).toBe(session["Mcp-Session-Id"]);
    const answer = await jsonAnswerOf(read);
    expect(answer.id).toBe(3);
    expect(JSON.parse(answerText(answer))).toMatchObject({ id: agent.id });

    const issue = await seedIssue(company, { title: "Written over SSE" });
    const write = await post(session, toolCall(4, "add_comment", { issueId: issue.identifier, body: "hi" }));
    expect(write.status).toBe(200);
    expect(write.headers.get("content-type")).toContain("text/event-stream");
    expect(await write.text()).toContain('"id":4');
  });

  it("reads of two callers at once, with the same JSON-RPC ids, each get their own answer", async () => {
    const [mine, theirs] = await Promise.all([openSession(agent.headers), openSession(rival.headers)]);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => post(i % 2 === 0 ? mine : theirs, toolCall(7, "me"))),
    );
    const who = await Promise.all(
      answers.map(async (response) => {
        const answer = await jsonAnswerOf(response);
        expect(answer.id).toBe(7);
        return (JSON.parse(answerText(answer)) as { id: string }).id;
      }),
    );
    expect(who).toEqual([agent.id, rival.id, agent.id, rival.id, agent.id, rival.id]);
  });

  it("a read on a deleted session, or with another key, answers 404 and runs nothing", async () => {
    const session = await openSession(agent.headers);
    const otherKey = await post(
      { ...session, Authorization: rival.headers.Authorization ?? "" },
      toolCall(2, "me"),
    );
    expect(otherKey.status).toBe(404);

    const ended = await dispatch(new Request(MCP_URL, { method: "DELETE", headers: session }));
    expect(ended.status).toBe(200);
    const afterDelete = await post(session, toolCall(5, "me"));
    expect(afterDelete.status).toBe(404);
    expect(await afterDelete.json()).toMatchObject({ error: { message: "Session not found" } });
  });

  it("a read with bad arguments is a clear MCP error; an unsupported protocol version is still 400", async () => {
    const session = await openSession(agent.headers);
    const bad = await jsonAnswerOf(await post(session, toolCall(8, "get_issue", { issueId: 42 })));
    expect(bad.result?.isError).toBe(true);
    expect(answerText(bad)).toMatch(/issueId/);

    const oldVersion = await post({ ...session, "MCP-Protocol-Version": "1999-01-01" }, toolCall(9, "me"));
    expect(oldVersion.status).toBe(400);
  });

  it("a direct read is in the company's activity log (written after the answer)", async () => {
    const session = await openSession(agent.headers);
    const issue = await seedIssue(company, { title: "Logged read" });
    const read = await jsonAnswerOf(await post(session, toolCall(10, "get_issue", { issueId: issue.id })));
    expect(read.result?.isError).toBeFalsy();
    await eventually(async () => {
      const row = await env.DB.prepare(
        "SELECT actor_id, details FROM activity_log WHERE company_id = ? AND action = 'mcp.tool_called' AND entity_id = 'get_issue' AND details LIKE ?",
      )
        .bind(company.id, `%${issue.id}%`)
        .first<{ actor_id: string; details: string }>();
      if (row === null) return false;
      expect(row.actor_id).toBe(agent.id);
      expect(JSON.parse(row.details)).toMatchObject({ outcome: "ok", scope: "read" });
      return true;
    });
  });
});
