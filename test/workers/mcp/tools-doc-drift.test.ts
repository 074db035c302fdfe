// docs/mcp-tools.md is generated from the registries (scripts/mcp-tools-doc.ts): these fail while the
// committed page is stale, or if the page's schemas stopped being what tools/list really sends.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import committed from "../../../docs/mcp-tools.md?raw";
import { inputJsonSchema, renderMcpToolsDoc } from "../../../scripts/mcp-tools-doc";
import { TOOLS } from "../../../workers/mcp/tools";
import { seedTenant } from "../control/helpers";
import { BASE, dispatch } from "../helpers";

describe("docs/mcp-tools.md", () => {
  it("matches the tools and resources /mcp registers (run `npm run docs:mcp` after changing one)", () => {
    expect(committed).toBe(renderMcpToolsDoc());
  });

  it("documents each tool with the description and input schema tools/list sends", async () => {
    const { agent } = await seedTenant();
    const client = new Client({ name: "docs-drift", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
        requestInit: { headers: agent.headers },
        fetch: (url, init) => dispatch(new Request(url, init)),
      }),
    );
    const listed = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool]));
    expect([...listed.keys()]).toEqual(TOOLS.map((tool) => tool.name));
    for (const tool of TOOLS) {
      const documented = inputJsonSchema(tool);
      expect(listed.get(tool.name)?.description).toBe(tool.description);
      expect(listed.get(tool.name)?.inputSchema.properties ?? {}).toEqual(documented?.properties ?? {});
      expect(listed.get(tool.name)?.inputSchema.required ?? []).toEqual(documented?.required ?? []);
    }
    await client.close();
  });
});
