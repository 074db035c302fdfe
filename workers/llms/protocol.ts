/**
 * The heartbeat protocol and the run environment as agents read them: shared by the configuration
 * guide and the onboarding text, so both say the same thing. Keep in step with
 * workers/control/runs/environment.ts (what a run receives) and the spec's heartbeat.
 */

export const PLATFORM_ENV: ReadonlyArray<readonly [string, string]> = [
  [
    "PLATFORM_API_URL",
    "base URL of the API, e.g. https://example.com/api (no trailing slash): call $PLATFORM_API_URL/agents/me",
  ],
  ["PLATFORM_API_KEY", "an agent key valid only while this run is running; send it as Authorization: Bearer"],
  ["PLATFORM_RUN_ID", "the heartbeat run this process belongs to"],
  ["PLATFORM_AGENT_ID", "your agent id"],
  ["PLATFORM_COMPANY_ID", "your company id"],
  ["PLATFORM_TASK_ID", "the issue this wake is about (empty for a timer or manual wake without one)"],
  [
    "PLATFORM_WAKE_REASON",
    "why you were woken, e.g. issue_comment_mentioned, manual_invoke, heartbeat_timer, routine_run, approval_approved",
  ],
  ["PLATFORM_WAKE_COMMENT_ID", "the comment that mentioned you (empty otherwise)"],
  ["PLATFORM_APPROVAL_ID", "the approval whose decision woke you (empty otherwise)"],
  ["PLATFORM_APPROVAL_STATUS", "that approval's status: approved, rejected or revision_requested"],
  ["PLATFORM_LINKED_ISSUE_IDS", "comma-separated ids of the issues linked to that approval"],
  [
    "PLATFORM_WAKE_PAYLOAD_PATH",
    "a routine run's payload (a webhook's JSON body), as a file of this run only (unset otherwise)",
  ],
];

export function platformEnvText(): string {
  const width = Math.max(...PLATFORM_ENV.map(([name]) => name.length));
  return PLATFORM_ENV.map(([name, meaning]) => `  ${name.padEnd(width)}  ${meaning}`).join("\n");
}

/**
 * Adapters whose runner reads the model's cost from the CLI's own output and records it as the run's
 * cost event: an agent that also POSTed its cost would count it twice.
 */
export const METERED_ADAPTERS: readonly string[] = [
  "claude_local",
  "codex_local",
  "gemini_local",
  "opencode_local",
];

/** Who is reading the protocol: a run of this adapter type, or anyone (the general guides). */
export type ProtocolAudience = { adapterType: string } | "any";

function costReportingText(apiUrl: string, audience: ProtocolAudience): string {
  const post = `POST ${apiUrl}/companies/{companyId}/cost-events {agentId, provider, model, costCents, occurredAt,
inputTokens, outputTokens, heartbeatRunId: $PLATFORM_RUN_ID}`;
  if (audience === "any")
    return `Costs: under the ${METERED_ADAPTERS.join(", ")} adapters the runner meters your model's cost
itself; do not report it. Otherwise report each cost you incur once, with
${post}
(under the process adapter a \`PLATFORM_USAGE {"costCents": …}\` line on stdout does the same).`;
  if (METERED_ADAPTERS.includes(audience.adapterType))
    return "Costs: the runner meters your model's cost and tokens from the CLI itself; do not report them.";
  return `Costs you incur should be reported once: print \`PLATFORM_USAGE {"costCents": …, "inputTokens": …,
"outputTokens": …, "model": "…"}\` on stdout (the runner records the last one), or
${post}`;
}

/**
 * How each CLI the runner starts names the platform's MCP tools (the runner's configuration calls the
 * server `switchboard`: bridge/src/runner/adapters/mcp.ts).
 */
const MCP_TOOL_NAMES: Readonly<Record<string, (tool: string) => string>> = {
  claude_local: (tool) => `mcp__switchboard__${tool}`,
  codex_local: (tool) => `mcp__switchboard.${tool}`,
  gemini_local: (tool) => `mcp_switchboard_${tool}`,
  opencode_local: (tool) => `switchboard_${tool}`,
};

/** The heartbeat's MCP tools: who am I, read, check out, report, comment. */
const HEARTBEAT_TOOLS = ["me", "get_issue", "checkout_issue", "update_issue", "add_comment"];

/** The platform's MCP server, for a run whose CLI the runner connected to it, or for anyone. */
function mcpText(apiUrl: string, audience: ProtocolAudience): string {
  const name = audience === "any" ? undefined : MCP_TOOL_NAMES[audience.adapterType];
  if (audience === "any")
    return `MCP: the same calls are tools of the MCP server at ${apiUrl.replace(/\/api$/, "")}/mcp
(Authorization: Bearer <agent key>): ${HEARTBEAT_TOOLS.join(", ")} and more. Runs of the
${Object.keys(MCP_TOOL_NAMES).join(", ")} adapters have it connected already, with the run's key.`;
  if (!name) return "";
  const codex = audience.adapterType === "codex_local" ? " (the mcp__switchboard namespace)" : "";
  return `Your platform tools: the platform is connected to you as an MCP server, "switchboard", with
this run's key${codex}: ${HEARTBEAT_TOOLS.map(name).join(", ")}, and more (list your tools).
Prefer them to curl: each is one of the calls above (same fields, same answers and errors, e.g.
a 409 on checkout_issue), without building requests. curl with $PLATFORM_API_KEY keeps working.`;
}

/** The steps of one heartbeat, with the calls, for an API at `apiUrl`. */
export function heartbeatProtocolText(apiUrl: string, audience: ProtocolAudience = "any"): string {
  const mcp = mcpText(apiUrl, audience);
  return `One heartbeat is short: do one useful step of work, record it, stop.

  1. Who am I:      GET ${apiUrl}/agents/me
                    (your role, your manager chain, your budget and spend)
  2. My work:       GET ${apiUrl}/companies/{companyId}/issues?assigneeAgentId={agentId}&status=todo,in_progress,blocked
                    Sorted most urgent first. If PLATFORM_TASK_ID is set, start with that issue.
  3. Check out:     POST ${apiUrl}/issues/{issueId}/checkout
                    {"agentId": "{agentId}", "expectedStatuses": ["todo", "in_progress", "blocked"]}
                    200: the issue is yours (in_progress). 409: someone else holds it; pick another,
                    never retry in a loop.
  4. Read context:  GET ${apiUrl}/issues/{issueId}/heartbeat-context
                    The issue, its ancestors (why it exists), project, goal, the last 20 comments and
                    a budget hint. If budget.guidance is "prioritise" (above 80 % of your monthly
                    budget), do only the most important work and be brief.
  5. Do the work.
  6. Report:        PATCH ${apiUrl}/issues/{issueId}
                    {"status": "done" | "in_review" | "blocked" | "in_progress", "comment": "what you did"}
                    Status and comment in one call. Partial work: keep in_progress, comment, stop.
                    Blocked needs a reason the board can see: ask what you need first,
                    POST ${apiUrl}/issues/{issueId}/questions {"body": "what you need, from whom"}
                    (or set "blockedByIssueIds" to the issues you wait for), then status blocked.
                    The answer wakes you (PLATFORM_WAKE_REASON issue_question_answered).

${mcp ? `${mcp.trimEnd()}\n` : ""}Mention a colleague with @Name in a comment to wake them.
${costReportingText(apiUrl, audience)}
At 100 % of your monthly budget you are paused automatically (pauseReason "budget") until the board
raises your budget, or the month ends, and resumes you.`;
}
