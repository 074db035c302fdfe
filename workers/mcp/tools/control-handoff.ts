import { z } from "@hono/zod-openapi";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CreateCommentBodySchema, IssueParamSchema } from "../../control/issues";
import { callerCompanyId, issuePath, restAs } from "./issue-read";
import { type AnyToolDefinition, defineTool, type ToolContext } from "./registry";
import { type RestAnswer, toolResultOf } from "./rest";

const HandOffToolInput = z.strictObject({
  ...IssueParamSchema.shape,
  to: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .describe(
      "Who takes over: their agent id, or their name as the company lists it (any case; a leading @ is fine)",
    ),
  note: CreateCommentBodySchema.shape.body.describe(
    "What they need to know: what is done, what is left, where things are. Posted as your comment, mentioning them",
  ),
  reassign: z
    .boolean()
    .optional()
    .describe(
      "true (default): they become the assignee and you stop holding the issue. false: you keep it and only " +
        "mention them (a review, a question, help)",
    ),
});

interface CompanyAgent {
  id: string;
  name: string;
  role: string;
  status: string;
}

/** Agents that cannot take work: not hired yet, or gone. */
const CANNOT_TAKE_WORK: Record<string, string> = {
  pending_approval: "is waiting for the board to approve its hire",
  terminated: "is terminated",
};

const refusal = (error: string): CallToolResult => toolResultOf({ status: 422, body: { error } });

/** The company whose agents the hand-off may name: the agent's own, or (user keys) the issue's. */
async function companyOf(ctx: ToolContext, issueId: string): Promise<string | RestAnswer> {
  const own = callerCompanyId(ctx);
  if (own !== undefined) return own;
  const issue = await restAs(ctx, { method: "GET", path: issuePath(issueId) });
  return issue.status === 200 ? (issue.body as { companyId: string }).companyId : issue;
}

/**
 * The one agent `to` names: an id, or a name compared whole and case-insensitively (names are unique
 * per company that way), so a prefix never picks the wrong colleague the way a loose @Name can.
 */
function resolveAgent(agents: readonly CompanyAgent[], to: string): CompanyAgent | string {
  const wanted = to.replace(/^@/, "").trim();
  const found =
    agents.find((agent) => agent.id === wanted) ??
    agents.find((agent) => agent.name.toLowerCase() === wanted.toLowerCase());
  if (found) return found;
  const names = agents
    .filter((agent) => agent.status !== "terminated")
    .map((agent) => `${agent.name} (${agent.role}, ${agent.id})`);
  return `No agent named "${wanted}" in this company. Its agents: ${names.join("; ")}`;
}

function checkTarget(ctx: ToolContext, target: CompanyAgent): string | undefined {
  const { actor } = ctx.caller;
  if (actor.type === "agent" && actor.agentId === target.id)
    return "You cannot hand off to yourself: name the colleague who should take over";
  const why = CANNOT_TAKE_WORK[target.status];
  return why ? `${target.name} ${why} and cannot take work: pick another agent` : undefined;
}

/**
 * The mention as a structured link: the id decides who is woken, whatever other names start the same
 * way or however the note is written (workers/control/wakes/mentions.ts).
 */
const mentionOf = (target: CompanyAgent) => `[@${target.name}](agent://${target.id})`;

function handOffResult(target: CompanyAgent, reassigned: boolean, answer: RestAnswer): CallToolResult {
  if (answer.status < 200 || answer.status >= 300) return toolResultOf(answer);
  const body = answer.body as Record<string, unknown>;
  const { comment, ...issue } = body;
  const woken =
    target.status === "paused"
      ? `${target.name} is paused: the wake is recorded but runs only once the board resumes it.`
      : `${target.name} is woken.`;
  const next = reassigned ? " The issue is theirs now: stop working on it." : "";
  return toolResultOf({
    status: 200,
    body: {
      handedOffTo: { id: target.id, name: target.name, status: target.status },
      reassigned,
      ...(reassigned ? { issue, comment } : { comment: body }),
      message: `${woken}${next}`,
    },
  });
}

async function handOff(ctx: ToolContext, input: z.infer<typeof HandOffToolInput>): Promise<CallToolResult> {
  const company = await companyOf(ctx, input.issueId);
  if (typeof company !== "string") return toolResultOf(company);
  const listed = await restAs(ctx, {
    method: "GET",
    path: `/companies/${encodeURIComponent(company)}/agents`,
  });
  if (listed.status !== 200) return toolResultOf(listed);
  const target = resolveAgent(listed.body as CompanyAgent[], input.to);
  if (typeof target === "string") return refusal(target);
  const problem = checkTarget(ctx, target);
  if (problem) return refusal(problem);
  const comment = `${mentionOf(target)} ${input.note}`;
  const reassign = input.reassign ?? true;
  const answer = reassign
    ? await restAs(ctx, {
        method: "PATCH",
        path: issuePath(input.issueId),
        body: { assigneeAgentId: target.id, comment },
      })
    : await restAs(ctx, {
        method: "POST",
        path: `${issuePath(input.issueId)}/comments`,
        body: { body: comment },
      });
  return handOffResult(target, reassign, answer);
}

export const controlHandOffTools: AnyToolDefinition[] = [
  defineTool({
    name: "hand_off",
    domain: "control",
    scope: "control",
    description:
      "Hand an issue to a colleague: names them by agent id or name (checked against the company's agents; " +
      "an unknown name is refused with the list), posts your note as a comment that mentions them (which " +
      "wakes them), and by default makes them the assignee in the same step. reassign false keeps the issue " +
      "yours and only asks them (review, help). Use it instead of writing @Name yourself. Answers who took " +
      "it and whether they were woken.",
    inputSchema: HandOffToolInput,
    run: handOff,
  }),
];
