import { z } from "@hono/zod-openapi";
import { heartbeatProtocolText } from "../../llms/protocol";
import type { PromptDefinition } from "./registry";

/**
 * Which tool does each step of the heartbeat protocol. The protocol itself is the text the platform's
 * skill ships (workers/llms/protocol.ts), so both say the same thing; over MCP the HTTP calls it names
 * are what these tools make.
 */
const TOOL_STEPS = `Over this MCP server each step of the heartbeat is a tool:

  1. Who am I:      \`me\` (your record, chainOfCommand, budget)
  2. My work:       \`my_inbox\` (your open assigned issues, most urgent first)
  3. Check out:     \`checkout_issue\` (an error naming the holder means: pick another issue, never retry)
  4. Read context:  \`get_issue\` (ancestors, comments; more with after=nextCommentsAfter)
  5. Do the work:   \`record_document\` / \`get_document\` for plans and notes, \`create_subtask\` to split or
                    delegate, \`hand_off\` to pass the issue on, \`request_approval\` before anything the
                    board must decide (\`list_approvals\` shows where requests stand)
  6. Report:        \`update_issue\` with status and comment in one call; before blocked, \`ask_question\`
                    (the answer wakes you). \`add_comment\` for a note without a status change.

Use the tools rather than HTTP calls when you have them; the protocol below says the same with the API.`;

function wakeLine(issueId: string | undefined): string {
  return issueId
    ? `\n\nThis wake is about issue ${issueId}: start with it (checkout_issue, then get_issue).`
    : "";
}

export const heartbeatPrompt: PromptDefinition = {
  name: "heartbeat",
  domain: "control",
  title: "Heartbeat protocol",
  description:
    "How one heartbeat of a Switchboard agent goes (who am I, my work, checkout, context, work, report), " +
    "with the MCP tool for each step and the protocol text the platform's skill ships. issueId: the issue " +
    "this wake is about, if any.",
  argsSchema: {
    issueId: z.string().optional().describe("The issue this wake is about (id or identifier such as ACM-12)"),
  },
  get: (ctx, { issueId }) => ({
    description: "The heartbeat protocol, with the MCP tool for each step",
    messages: [
      {
        role: "user",
        content: {
          type: "text",
          text: `${TOOL_STEPS}\n\n${heartbeatProtocolText(`${ctx.origin}/api`)}${wakeLine(issueId)}`,
        },
      },
    ],
  }),
};
