/// <reference types="vite/client" />
// Every tool /mcp serves is called by some test through the SDK client: a tool added without one
// fails here, so "call every tool" (issue 27) stays true as the list grows.
import { describe, expect, it } from "vitest";
import { TOOLS } from "../../../workers/mcp/tools";

const suites = import.meta.glob(["./*.test.ts", "../../e2e/*.test.ts"], {
  query: "?raw",
  import: "default",
  eager: true,
});

/** Tool names some suite passes to callTool (as `callTool(client, "name"` or a [name, args] table). */
function calledTools(): Set<string> {
  const called = new Set<string>();
  for (const text of Object.values(suites) as string[]) {
    for (const match of text.matchAll(/callTool\(\s*\w+,\s*"([a-z_]+)"/g)) called.add(match[1] ?? "");
    for (const match of text.matchAll(/\[\s*"([a-z_]+)",\s*\{/g)) called.add(match[1] ?? "");
  }
  return called;
}

describe("the MCP tools", () => {
  it("are each called by a test", () => {
    const called = calledTools();
    expect(TOOLS.map((tool) => tool.name).filter((name) => !called.has(name))).toEqual([]);
  });
});
