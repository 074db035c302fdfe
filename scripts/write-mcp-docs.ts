/**
 * Prints docs/mcp-tools.md, the MCP tool list generated from the registries the server registers.
 * `npm run docs:mcp` writes it; a workerd test fails while that file is stale.
 */
import { renderMcpToolsDoc } from "./mcp-tools-doc";

console.log(renderMcpToolsDoc().trimEnd());
