/**
 * The company's WhatsApp line (a session an owner links for its agents) and the board's MCP policy
 * for agents' WhatsApp sends. HTTP in routes.ts and policy-routes.ts.
 *
 * This index is what the rest of the code may import from here.
 */

export { type LineOwnerAccess, lineOwnerAccess } from "./access";
export {
  type LineRecipient,
  memberByPhone,
  quietUntil,
  type RecipientFilter,
  recipientsFor,
} from "./directory";
export { type LineContent, type LineFetch, type LineSendResult, sendOnLine } from "./send";
export {
  DEFAULT_DAILY_SEND_CAP,
  DEFAULT_POLICY,
  findLine,
  GOVERNED_TOOLS,
  type GovernedTool,
  mcpSettingsOf,
  type PolicySetting,
} from "./store";
