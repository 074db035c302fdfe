// An agent's heartbeat through the platform's MCP tools instead of curl (issue 27: "our own agents
// use /mcp"), for the CLI suites whose runner writes the CLI's MCP configuration
// (bridge/src/runner/adapters/mcp.ts): the moves the fake model makes, and what the run must show.
import { expect } from "vitest";
import { type Agent, type AgentLoop, DONE, expectWokenToDone, type Json, PICKED_UP } from "./agent-loop.ts";

/** A call of one of the platform's MCP tools (workers/mcp/tools), by its bare name. */
export type McpCall = { tool: string; input: Json };

export const MCP_AGENT = "Courier";
export const MCP_RUN_DONE = "MCP-RUN-DONE.";

/**
 * Courier's next move, its agent's part of the conversation told apart by its name in what the
 * model is sent (`text`): check out the task the prompt names, comment, set it done with a comment,
 * one MCP call per answer (`answered` tool results so far), then say so. Null: not Courier's.
 */
export function mcpMove(text: string, answered: number): { mcp: McpCall } | { text: string } | null {
  if (!text.includes(MCP_AGENT)) return null;
  const issueId = text.match(/Task: ([0-9a-f-]{36})/)?.[1] ?? "no-task-in-the-prompt";
  const calls: McpCall[] = [
    { tool: "checkout_issue", input: { issueId, expectedStatuses: ["todo"] } },
    { tool: "add_comment", input: { issueId, body: PICKED_UP } },
    { tool: "update_issue", input: { issueId, status: "done", comment: DONE } },
  ];
  const call = calls[answered];
  return call ? { mcp: call } : { text: MCP_RUN_DONE };
}

/**
 * Wakes `agent` (Courier) on a fresh issue: its run checks the issue out, comments and sets it done
 * through the platform's MCP tools (named `toolName(tool)` by its CLI) and nothing else: the issue is
 * done by the agent with both comments as the agent's, the transcript holds the three MCP calls and
 * their results (the checkout's is the API's issue, in progress), no other tool call, and no curl in
 * the run's output. Returns the run's transcript.
 */
export async function expectMcpLoop(
  loop: AgentLoop,
  agent: Agent,
  toolName: (tool: string) => string,
): Promise<Json[]> {
  const { run, raw } = await expectWokenToDone(loop, agent, "Ship the changelog");
  expect(raw).not.toMatch(/curl/i);

  const transcript = await loop.events(run.id);
  const calls = transcript.filter((event) => event.type === "tool_call");
  expect(
    calls.map((event) => event.name),
    JSON.stringify(transcript),
  ).toEqual(["checkout_issue", "add_comment", "update_issue"].map(toolName));
  const results = transcript.filter((event) => event.type === "tool_result");
  expect(results.map((event) => event.isError)).toEqual([false, false, false]);
  expect(results[0]?.output).toMatch(/in_progress/);
  expect(transcript.at(-2)).toMatchObject({ type: "assistant", text: MCP_RUN_DONE });
  return transcript;
}
