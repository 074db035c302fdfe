/** OAuth for browser-based MCP clients (issue 27, docs/mcp.md "OAuth (browser-based clients)"). */
export {
  type ConnectedApp,
  listConnectedApps,
  looksLikeOAuthToken,
  principalFromOAuthToken,
  revokeConnectedApp,
} from "./access";
export {
  approveAuthorization,
  denialRedirect,
  type PendingAuthorization,
  readAuthorization,
} from "./authorize";
export { resourceMetadataUrl } from "./server";
