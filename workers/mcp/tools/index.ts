import { controlTools } from "./control";
import { controlApprovalTools } from "./control-approvals";
import { controlHandOffTools } from "./control-handoff";
import { controlIssueTools } from "./control-issues";
import type { AnyToolDefinition } from "./registry";
import { whatsappReadTools } from "./whatsapp-read";
import { whatsappSendTools } from "./whatsapp-send";

export { toolInputJsonSchema } from "./input-schema";
export { invokeTool } from "./invoke";
export { issuePath, readIssueWithComments, restAs } from "./issue-read";
export type {
  AnyToolDefinition,
  AppFetch,
  BoundFetch,
  McpCaller,
  ToolContext,
  ToolDomain,
  ToolScope,
} from "./registry";
export { TOOL_SCOPES } from "./registry";
export { asCaller, type RestAnswer, toolResultOf } from "./rest";
export { sendApprovedMessages } from "./send-approval";
export { chatHistory } from "./whatsapp-read";

/** Every tool /mcp serves, in the order tools/list shows them (one line per domain's list). */
export const TOOLS: readonly AnyToolDefinition[] = [
  ...controlTools,
  ...controlIssueTools,
  ...controlHandOffTools,
  ...controlApprovalTools,
  ...whatsappReadTools,
  ...whatsappSendTools,
];
