// Server-initiated notifications (issue 27): a client subscribed to an issue resource hears
// `notifications/resources/updated` on the session's GET stream when the issue changes, through the
// issue's own live feed opened as the caller (so another company's issue cannot be subscribed to).
import { abortAllDurableObjects } from "cloudflare:test";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import {
  type BoardUser,
  type SeededAgent,
  type SeededCompany,
  seedIssue,
  seedTwoTenants,
} from "../control/helpers";
import { call, dispatch } from "../helpers";
import { PATIENCE_MS } from "../patience";
import { connectMcp, MCP_URL } from "./client";

/** A connected client that records every resources/updated URI it is told of. */
async function listeningClient(headers: Record<string, string>) {
  const connected = await connectMcp(headers);
  const updated: string[] = [];
  connected.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    updated.push(notification.params.uri);
  });
  return { ...connected, updated };
}

const comment = (owner: BoardUser, issueId: string, body: string) =>
  call("POST", `/api/issues/${issueId}/comments`, { headers: owner.headers, body: { body } });

describe("/mcp resource subscriptions", () => {
  let owner: BoardUser;
  let company: SeededCompany;
  let agent: SeededAgent;
  let otherCompany: SeededCompany;

  beforeAll(async () => {
    ({ owner, company, agent, other: otherCompany } = await seedTwoTenants());
  });

  it("advertises subscribe, and a subscribed issue's new comment is announced on the GET stream", async () => {
    const issue = await seedIssue(company, { title: "Watched" });
    const { client, updated } = await listeningClient(agent.headers);
    expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    const uri = `issue://${issue.identifier}`;
    await client.subscribeResource({ uri });

    expect((await comment(owner, issue.id, "news")).status).toBe(201);
    await expect.poll(() => updated, { timeout: PATIENCE_MS }).toContain(uri);
    // The notification says what changed; reading the resource shows it.
    const read = await client.readResource({ uri });
    expect(JSON.stringify(read.contents)).toContain("news");
    await client.close();
  });

  it("after unsubscribe the issue's changes are no longer announced; another subscription still is", async () => {
    const [dropped, kept] = [
      await seedIssue(company, { title: "Dropped" }),
      await seedIssue(company, { title: "Kept" }),
    ];
    const { client, updated } = await listeningClient(agent.headers);
    const droppedUri = `issue://${dropped.identifier}`;
    const keptUri = `issue://${kept.identifier}`;
    await client.subscribeResource({ uri: droppedUri });
    await client.unsubscribeResource({ uri: droppedUri });
    await client.subscribeResource({ uri: keptUri });

    expect((await comment(owner, dropped.id, "unheard")).status).toBe(201);
    expect((await comment(owner, kept.id, "heard")).status).toBe(201);
    await expect.poll(() => updated, { timeout: PATIENCE_MS }).toContain(keptUri);
    expect(updated).not.toContain(droppedUri);
    await client.close();
  });

  it("another company's issue, or a resource that is not an issue, cannot be subscribed to", async () => {
    const foreign = await seedIssue(otherCompany, { title: "Not yours" });
    const { client } = await listeningClient(agent.headers);
    await expect(client.subscribeResource({ uri: `issue://${foreign.id}` })).rejects.toThrow(/not found/);
    await expect(client.subscribeResource({ uri: "chat://somewhere/123" })).rejects.toThrow(/issue:\/\//);
    await client.close();
  });

  it("a session rebuilt after its object was evicted still announces what it had subscribed to", async () => {
    const issue = await seedIssue(company, { title: "Survives" });
    const uri = `issue://${issue.identifier}`;
    const { client, transport } = await listeningClient(agent.headers);
    await client.subscribeResource({ uri });
    await abortAllDurableObjects();
    // The session's GET stream died with its object; a client reconnects it, which rebuilds the
    // session and its subscriptions in a fresh object.
    const stream = await dispatch(
      new Request(MCP_URL, {
        method: "GET",
        headers: {
          ...agent.headers,
          Accept: "text/event-stream",
          "Mcp-Session-Id": transport.sessionId ?? "",
          "MCP-Protocol-Version": "2025-11-25",
        },
      }),
    );
    expect(stream.status).toBe(200);
    expect((await comment(owner, issue.id, "after the eviction")).status).toBe(201);
    expect(await textUntil(stream, uri)).toContain('"method":"notifications/resources/updated"');
    await client.close();
  });
});

/** The stream's text up to and including the first chunk that mentions `needle`. */
async function textUntil(response: Response, needle: string): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) throw new Error("no stream");
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes(needle)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}
