// MCP sessions (issue 27): Mcp-Session-Id issued by initialize and bound to the key that created it,
// SSE responses resumable with Last-Event-ID, DELETE, and the session held in a Durable Object (it
// survives the object being evicted; it ends when its key's access ends or after a day idle).
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { SqlEventStore } from "../../../durable-objects/mcp-session/event-store";
import { firstEventOnly } from "../../support/sse-cut";
import {
  type BoardUser,
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  seedIssue,
  seedTwoTenants,
} from "../control/helpers";
import { asKey, asSession, BASE, call, createUser, dispatch, generateKey, login } from "../helpers";
import { abortableDispatch, callTool, connectMcp, MCP_URL, textOf } from "./client";

const VERSION = "2025-11-25";
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const LIST = { jsonrpc: "2.0", id: 2, method: "tools/list" };

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

/** A session opened by a raw initialize: its id, with the init answer read to the end. */
async function openSession(headers: Record<string, string>): Promise<string> {
  const response = await post(headers, INITIALIZE);
  expect(response.status).toBe(200);
  await response.text();
  const id = response.headers.get("mcp-session-id");
  if (!id) throw new Error("no Mcp-Session-Id on the initialize answer");
  return id;
}

const inSession = (headers: Record<string, string>, sessionId: string) => ({
  ...headers,
  "Mcp-Session-Id": sessionId,
  "MCP-Protocol-Version": VERSION,
});

const openStream = (headers: Record<string, string>, sessionId: string) =>
  dispatch(
    new Request(MCP_URL, {
      method: "GET",
      headers: { ...inSession(headers, sessionId), Accept: "text/event-stream" },
    }),
  );

async function readToEnd(body: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of body) text += decoder.decode(chunk, { stream: true });
  return text;
}

const sessionObject = (sessionId: string) => env.MCP_SESSION.getByName(sessionId);

describe("/mcp sessions", () => {
  let owner: BoardUser;
  let company: SeededCompany;
  let agent: SeededAgent;
  let rival: SeededAgent;

  beforeAll(async () => {
    ({ owner, company, agent } = await seedTwoTenants());
    rival = await seedAgent(company.id);
  });

  it("initialize issues an unguessable session id; later requests need it: 400 without, 404 unknown", async () => {
    const first = await post(agent.headers, INITIALIZE);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toContain("text/event-stream");
    expect(await first.text()).toContain('"serverInfo"');
    const sessionId = first.headers.get("mcp-session-id") ?? "";
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await openSession(agent.headers)).not.toBe(sessionId);

    const without = await post(agent.headers, LIST);
    expect(without.status).toBe(400);
    expect(await without.text()).toContain("Mcp-Session-Id");
    const unknown = await post(inSession(agent.headers, "A".repeat(43)), LIST);
    expect(unknown.status).toBe(404);
    const known = await post(inSession(agent.headers, sessionId), LIST);
    expect(known.status).toBe(200);
    expect(await known.text()).toContain("get_issue");
  });

  it("DELETE ends the session: then 404 to everything, and the client initializes a new one", async () => {
    const { client, transport } = await connectMcp(agent.headers);
    const sessionId = transport.sessionId ?? "";
    expect(sessionId).not.toBe("");
    await transport.terminateSession();
    expect((await post(inSession(agent.headers, sessionId), LIST)).status).toBe(404);
    expect((await openStream(agent.headers, sessionId)).status).toBe(404);
    await client.close();

    const again = await connectMcp(agent.headers);
    expect(again.transport.sessionId).not.toBe(sessionId);
    expect((await again.client.listTools()).tools.length).toBeGreaterThan(0);
    await again.client.close();
  });

  it("a session answers only the key that created it: another key with its id gets 404", async () => {
    const { client, transport } = await connectMcp(agent.headers);
    const sessionId = transport.sessionId ?? "";
    for (const headers of [rival.headers, owner.headers, { Authorization: `Bearer ${owner.key}` }]) {
      expect((await post(inSession(headers, sessionId), LIST)).status).toBe(404);
      expect((await openStream(headers, sessionId)).status).toBe(404);
      const end = await dispatch(
        new Request(MCP_URL, { method: "DELETE", headers: inSession(headers, sessionId) }),
      );
      expect(end.status).toBe(404);
    }
    expect(JSON.parse(textOf(await callTool(client, "me")))).toMatchObject({ id: agent.id });
    await client.close();
  });

  it("a write's tools/call stream cut after its priming event is resumed with Last-Event-ID and delivers the result once", async () => {
    const issue = await seedIssue(company, { title: "Resume me" });
    const resumedFrom: string[] = [];
    const { client } = await connectMcp(agent.headers, async (url, init) => {
      const lastEventId = new Headers(init?.headers).get("last-event-id");
      if (lastEventId) resumedFrom.push(lastEventId);
      const response = await abortableDispatch(url, init);
      const isToolCall = typeof init?.body === "string" && init.body.includes('"tools/call"');
      return isToolCall && response.body ? new Response(firstEventOnly(response.body), response) : response;
    });
    const result = await callTool(client, "add_comment", { issueId: issue.identifier, body: "resumed" });
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(textOf(result))).toMatchObject({ body: "resumed" });
    expect(resumedFrom).toHaveLength(1);
    const comments = await env.DB.prepare("SELECT body FROM issue_comments WHERE issue_id = ?")
      .bind(issue.id)
      .all<{ body: string }>();
    expect(comments.results.map((row) => row.body)).toEqual(["resumed"]);
    await client.close();
  });

  it("the session survives its Durable Object being evicted (rehydrated from storage) for reads and writes", async () => {
    const issue = await seedIssue(company, { title: "After eviction" });
    const { client, transport } = await connectMcp(agent.headers);
    const sessionId = transport.sessionId ?? "";
    expect(sessionId).not.toBe("");
    await abortAllDurableObjects();
    expect(JSON.parse(textOf(await callTool(client, "me")))).toMatchObject({ id: agent.id });
    await abortAllDurableObjects();
    const written = await callTool(client, "add_comment", { issueId: issue.identifier, body: "still here" });
    expect(written.isError).toBeFalsy();
    expect(transport.sessionId).toBe(sessionId);
    await client.close();
  });

  for (const [how, end] of [
    [
      "its key is revoked",
      async (gone: SeededAgent) => {
        const key = await env.DB.prepare("SELECT id FROM agent_api_keys WHERE agent_id = ?")
          .bind(gone.id)
          .first<{ id: string }>();
        return call("DELETE", `/api/agents/${gone.id}/keys/${key?.id}`, { headers: owner.headers });
      },
    ],
    [
      "its agent is terminated",
      (gone: SeededAgent) => call("POST", `/api/agents/${gone.id}/terminate`, { headers: owner.headers }),
    ],
  ] as const) {
    it(`when ${how}, its open GET stream closes at once and the next request answers 401`, async () => {
      const doomed = await seedAgent(company.id);
      const sessionId = await openSession(doomed.headers);
      const stream = await openStream(doomed.headers, sessionId);
      expect(stream.status).toBe(200);
      expect(stream.headers.get("content-type")).toContain("text/event-stream");
      const reading = readToEnd(stream.body as ReadableStream<Uint8Array>);
      expect((await end(doomed)).status).toBe(200);
      await reading;
      expect((await post(inSession(doomed.headers, sessionId), LIST)).status).toBe(401);
    });
  }

  it("when a user regenerates their API key, the old key's GET stream closes and its next request answers 401", async () => {
    const session = await createUser("OWNER");
    const oldKey = await generateKey(session);
    const sessionId = await openSession(asKey(oldKey));
    const stream = await openStream(asKey(oldKey), sessionId);
    expect(stream.status).toBe(200);
    const reading = readToEnd(stream.body as ReadableStream<Uint8Array>);
    await generateKey(session);
    await reading;
    expect((await post(inSession(asKey(oldKey), sessionId), LIST)).status).toBe(401);
  });

  it("a sign-out elsewhere closes the key's open stream but not its session; a later revocation still closes a new stream", async () => {
    const session = await createUser("OWNER");
    const key = await generateKey(session);
    const sessionId = await openSession(asKey(key));
    const first = await openStream(asKey(key), sessionId);
    const firstReading = readToEnd(first.body as ReadableStream<Uint8Array>);
    // The runner signing in and out as this user, say: the key is untouched.
    const other = await login(session.email, session.password);
    expect((await call("POST", "/api/auth/logout", { headers: asSession(other) })).status).toBe(200);
    await firstReading;
    const listed = await post(inSession(asKey(key), sessionId), LIST);
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain("checkout_issue");

    const second = await openStream(asKey(key), sessionId);
    expect(second.status).toBe(200);
    const secondReading = readToEnd(second.body as ReadableStream<Uint8Array>);
    expect((await call("DELETE", "/api/user/api-key", { headers: asSession(session) })).status).toBe(200);
    await secondReading;
    expect((await post(inSession(asKey(key), sessionId), LIST)).status).toBe(401);
  });

  it("a foreign Origin answers 403; the request's own origin and no Origin are served", async () => {
    const foreign = await post({ ...agent.headers, Origin: "https://evil.example" }, INITIALIZE);
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("mcp-session-id")).toBeNull();
    const sameOrigin = await post({ ...agent.headers, Origin: BASE }, INITIALIZE);
    expect(sameOrigin.status).toBe(200);
    await sameOrigin.text();
  });

  it("a session idle for a day ends (its alarm), then answers 404", async () => {
    const sessionId = await openSession(agent.headers);
    const stub = sessionObject(sessionId);
    await runInDurableObject(stub, (_, state) => {
      state.storage.sql.exec("UPDATE mcp_session SET last_used_at = ?", Date.now() - 25 * 3_600_000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await post(inSession(agent.headers, sessionId), LIST)).status).toBe(404);
  });

  it("the event store keeps a bounded number of events and replays those after an id, in order", async () => {
    const { SqlEventStore: Store } = await import("../../../durable-objects/mcp-session/event-store");
    await runInDurableObject(sessionObject(crypto.randomUUID()), async (_, state) => {
      const store: SqlEventStore = new Store(state.storage.sql, { maxEvents: 4, maxBytes: 1_000_000 });
      const ids: string[] = [];
      for (let id = 1; id <= 5; id++)
        ids.push(await store.storeEvent("s1", { jsonrpc: "2.0", id, result: {} }));
      await store.storeEvent("s2", { jsonrpc: "2.0", id: 9, result: {} });
      const replayed: unknown[] = [];
      const stream = await store.replayEventsAfter(ids[2] ?? "", {
        send: async (_id, message) => void replayed.push(message),
      });
      expect(stream).toBe("s1");
      expect(replayed).toEqual([
        { jsonrpc: "2.0", id: 4, result: {} },
        { jsonrpc: "2.0", id: 5, result: {} },
      ]);
      // The oldest were dropped: an id older than what is kept cannot be resumed from.
      expect(await store.getStreamIdForEventId(ids[0] ?? "")).toBeUndefined();
    });
  });
});
