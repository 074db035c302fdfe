// The issue resources and the heartbeat prompt over /mcp, read with the official SDK client.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BoardUser, type SeededCompany, seedAgent, seedIssue, seedTwoTenants } from "../control/helpers";
import { call } from "../helpers";
import { connect } from "./client";

const textOfResource = (contents: Array<{ text: string } | { blob: string }>) =>
  contents.map((part) => ("text" in part ? part.text : "")).join("\n");

describe("issue resources and the heartbeat prompt over /mcp", () => {
  let owner: BoardUser;
  let company: SeededCompany;
  let other: SeededCompany;
  let client: Client;

  beforeAll(async () => {
    const tenants = await seedTwoTenants();
    ({ owner, company, other } = tenants);
    client = await connect(tenants.agent.headers);
  });
  afterAll(() => client.close());

  it("lists the issue and issue-document templates", async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    const byTemplate = new Map(resourceTemplates.map((template) => [template.uriTemplate, template]));
    expect(byTemplate.get("issue://{issueId}")?.mimeType).toBe("text/markdown");
    expect(byTemplate.get("issue://{issueId}/documents/{key}")?.mimeType).toBe("text/markdown");
    for (const template of resourceTemplates) expect(template.description?.length ?? 0).toBeGreaterThan(40);
  });

  it("reads an issue by identifier as markdown: state, ancestors, description, comments with authors", async () => {
    const writer = await seedAgent(company.id, { name: `Ada ${crypto.randomUUID().slice(0, 6)}` });
    const parent = await seedIssue(company, { title: "Launch the beta" });
    const issue = await seedIssue(company, {
      title: "Write the changelog",
      parentId: parent.id,
      assigneeAgentId: writer.id,
    });
    await call("PATCH", `/api/issues/${issue.id}`, {
      headers: owner.headers,
      body: { description: "Everything since 0.9." },
    });
    await call("POST", `/api/issues/${issue.id}/comments`, {
      headers: writer.headers,
      body: { body: "Draft is in the plan document." },
    });
    const { contents } = await client.readResource({ uri: `issue://${issue.identifier}` });
    expect(contents[0]).toMatchObject({ uri: `issue://${issue.identifier}`, mimeType: "text/markdown" });
    const text = textOfResource(contents);
    expect(text).toContain(`# ${issue.identifier}: Write the changelog`);
    expect(text).toContain(`${parent.identifier}: Launch the beta`);
    expect(text).toContain("Everything since 0.9.");
    expect(text).toContain(`Assignee: ${writer.name}`);
    expect(text).toContain(`${writer.name}`);
    expect(text).toContain("Draft is in the plan document.");
  });

  it("reads an issue document's current body", async () => {
    const issue = await seedIssue(company);
    for (const body of ["v1", "# Plan\n\nv2"]) {
      const current = await call<{ latestRevisionId: string }>(
        "GET",
        `/api/issues/${issue.id}/documents/plan`,
        {
          headers: owner.headers,
        },
      );
      await call("PUT", `/api/issues/${issue.id}/documents/plan`, {
        headers: owner.headers,
        body: { body, ...(current.status === 200 ? { baseRevisionId: current.body.latestRevisionId } : {}) },
      });
    }
    const uri = `issue://${issue.identifier}/documents/plan`;
    const { contents } = await client.readResource({ uri });
    expect(contents).toEqual([{ uri, mimeType: "text/markdown", text: "# Plan\n\nv2" }]);
  });

  it("another company's issue, an unknown issue or a missing document is a read error, never content", async () => {
    const theirs = await seedIssue(other, { title: "Their secret roadmap" });
    const mine = await seedIssue(company);
    for (const uri of [
      `issue://${theirs.identifier}`,
      `issue://${theirs.id}`,
      `issue://${theirs.identifier}/documents/plan`,
      `issue://${crypto.randomUUID()}`,
      `issue://${mine.identifier}/documents/nothing-here`,
    ]) {
      const read = client.readResource({ uri });
      await expect(read, uri).rejects.toThrow(/not found/i);
      await expect(read, uri).rejects.not.toThrow(/secret roadmap/);
    }
  });

  it("lists the heartbeat prompt and renders the protocol with the MCP tools for each step", async () => {
    const { prompts } = await client.listPrompts();
    const heartbeat = prompts.find((prompt) => prompt.name === "heartbeat");
    expect(heartbeat?.description?.length ?? 0).toBeGreaterThan(40);
    expect(heartbeat?.arguments?.map((argument) => argument.name)).toEqual(["issueId"]);
    const issue = await seedIssue(company);
    const rendered = await client.getPrompt({ name: "heartbeat", arguments: { issueId: issue.identifier } });
    expect(rendered.messages).toHaveLength(1);
    const [message] = rendered.messages;
    expect(message?.role).toBe("user");
    const text = message?.content.type === "text" ? message.content.text : "";
    // The protocol the shipped skill carries, and the tools that do each step.
    expect(text).toContain("One heartbeat is short");
    for (const tool of ["me", "my_inbox", "checkout_issue", "get_issue", "update_issue", "ask_question"])
      expect(text).toContain(`\`${tool}\``);
    expect(text).toContain(issue.identifier);
    const bare = await client.getPrompt({ name: "heartbeat" });
    expect(bare.messages[0]?.content.type === "text" && bare.messages[0].content.text).not.toContain(
      issue.identifier,
    );
  });
});
