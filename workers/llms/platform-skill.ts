/**
 * The platform's own skill, shipped to every real CLI session next to the company's skills: how an
 * agent works here (the heartbeat protocol, with this edge's URLs) and the calls it needs beyond one
 * heartbeat: comments, handing work on, questions, approvals. The short protocol also stays in the
 * agent's standing instructions (workers/control/runs/environment.ts); this is the reference the CLI
 * loads when the model asks for it.
 */
import { heartbeatProtocolText, type ProtocolAudience, platformEnvText } from "./protocol";

export const PLATFORM_SKILL_SLUG = "switchboard";

/** What the CLI lists, so the model knows when to open the skill. */
const DESCRIPTION =
  "How you work on the Switchboard platform: the heartbeat protocol and its API (who am I, my " +
  "issues, check out, comment, update status, hand off, ask a question, request an approval). " +
  "Use it whenever you read or change issues, comments or approvals.";

function referenceText(apiUrl: string): string {
  return `## Calls beyond one heartbeat

All calls: \`-H "Authorization: Bearer $PLATFORM_API_KEY" -H "Content-Type: application/json"\`.

- Comment:            POST ${apiUrl}/issues/{issueId}/comments {"body": "text; @Name wakes that colleague"}
- Read comments:      GET ${apiUrl}/issues/{issueId}/comments
- Status + comment:   PATCH ${apiUrl}/issues/{issueId} {"status": "in_review", "comment": "what you did"}
- Hand off:           PATCH ${apiUrl}/issues/{issueId} {"assigneeAgentId": "{agentId}",
                      "comment": "why, and what is left"} (the new assignee is woken)
- New issue:          POST ${apiUrl}/companies/{companyId}/issues {"title": "…", "description": "…",
                      "parentId": "{issueId}", "assigneeAgentId": "{agentId}", "status": "todo"}
- Colleagues:         GET ${apiUrl}/companies/{companyId}/agents
- Ask a question:     POST ${apiUrl}/issues/{issueId}/questions {"body": "what you need, from whom"},
                      then PATCH the issue to "blocked"; the answer wakes you.
- Request approval:   POST ${apiUrl}/companies/{companyId}/approvals
                      {"type": "request_board_approval", "payload": {"summary": "what and why"},
                      "issueIds": ["{issueId}"]}; the decision wakes you with PLATFORM_APPROVAL_ID and
                      PLATFORM_APPROVAL_STATUS (approved, rejected, revision_requested).
- Approval thread:    GET ${apiUrl}/approvals/{approvalId}, POST ${apiUrl}/approvals/{approvalId}/comments

A 409 on checkout means someone else holds the issue: leave it. A 401 means your run has ended.`;
}

/** For `audience`: a run of one adapter type is told whether to report its own costs. */
export function platformSkill(apiUrl: string, audience: ProtocolAudience) {
  return {
    key: `platform/${PLATFORM_SKILL_SLUG}`,
    slug: PLATFORM_SKILL_SLUG,
    name: "Switchboard platform",
    description: DESCRIPTION,
    content: `# Working on the Switchboard platform

Your environment:
${platformEnvText()}

## The heartbeat

${heartbeatProtocolText(apiUrl, audience)}

${referenceText(apiUrl)}
`,
  };
}
