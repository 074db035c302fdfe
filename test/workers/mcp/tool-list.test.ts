// tools/list over /mcp answers exactly what the SDK's own McpServer lists for the same definitions
// (server.ts builds the list once per isolate instead of converting every schema on every request),
// plus the field descriptions the REST schemas write with `.openapi()`, which the SDK cannot see.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { describe, expect, it } from "vitest";
import { TOOLS } from "../../../workers/mcp/tools";
import { seedTenant } from "../control/helpers";
import { BASE, dispatch } from "../helpers";

/** The SDK's listing: a plain McpServer registering every definition, asked over an in-memory pair. */
async function sdkListing() {
  const reference = new McpServer(
    { name: "reference", version: "0" },
    { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  for (const tool of TOOLS) {
    reference.registerTool(
      tool.name,
      { description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations },
      async () => ({ content: [] }),
    );
  }
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await reference.connect(serverSide);
  const client = new Client({ name: "reference-client", version: "0" });
  await client.connect(clientSide);
  const { tools } = await client.listTools();
  await client.close();
  // As a client over HTTP receives it: the in-memory pair passes objects, undefined members included.
  return JSON.parse(JSON.stringify(tools));
}

async function servedListing(headers: Record<string, string>) {
  const client = new Client({ name: "tool-list", version: "0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
      requestInit: { headers },
      fetch: (url, init) => dispatch(new Request(url, init)),
    }),
  );
  const { tools } = await client.listTools();
  await client.close();
  return tools;
}

/**
 * `served` without the descriptions `reference` lacks at the same place: what is left must be the
 * SDK's listing exactly, so the only difference allowed is descriptions added.
 */
function withoutAddedDescriptions(served: unknown, reference: unknown): unknown {
  if (Array.isArray(served))
    return served.map((item, i) => withoutAddedDescriptions(item, (reference as unknown[] | undefined)?.[i]));
  if (served === null || typeof served !== "object") return served;
  const ref = (reference ?? {}) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(served)
      .filter(([key]) => key !== "description" || "description" in ref)
      .map(([key, value]) => [key, withoutAddedDescriptions(value, ref[key])]),
  );
}

describe("tools/list", () => {
  it("answers what the SDK lists for the same tool definitions, request after request", async () => {
    const { agent, board } = await seedTenant();
    const expected = await sdkListing();
    expect(expected.length).toBe(TOOLS.length);
    const asAgent = await servedListing(agent.headers);
    expect(withoutAddedDescriptions(asAgent, expected)).toEqual(expected);
    expect(await servedListing(board.headers)).toEqual(asAgent);
  });
});

describe("tools/list input schemas", () => {
  it("carry the descriptions the REST schemas give their fields with .openapi({ description })", async () => {
    const { board } = await seedTenant();
    const tools = await servedListing(board.headers);
    const schedule = tools.find((tool) => tool.name === "schedule_message");
    const fields = schedule?.inputSchema.properties as Record<string, { description?: string }>;
    // Written only as `.openapi({ description })` in gateway/scheduler-schemas.ts.
    expect(fields.cronExpression?.description).toBe(
      "5-field cron, read in `timezone`: after each send the message moves to the next tick",
    );
    expect(fields.timezone?.description).toBe("IANA time zone; default UTC");
    expect(fields.sendAt?.description).toMatch(/^ISO 8601\. With an offset/);
  });
});
