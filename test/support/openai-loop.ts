// The agent loop (agent-loop.ts) against the fake OpenAI Responses API, for the CLIs that talk to it
// (codex, opencode): every answer reports TOKENS_PER_REQUEST, a shell move is the CLI's own shell tool
// call, and a refusal is the API's 400.
import { AgentLoop, type Move, nextMove, TOKENS_PER_REQUEST } from "./agent-loop.ts";
import {
  type Call,
  callOutputs,
  type FakeOpenAI,
  type Reply,
  requestText,
  startFakeOpenAI,
} from "./fake-models/openai.ts";
import { type McpCall, mcpMove } from "./mcp-loop.ts";

const { input, cached, output } = TOKENS_PER_REQUEST;
const USAGE = { input_tokens: input, cached_tokens: cached, output_tokens: output };

/**
 * `mcpCall`: how the CLI has the model call one of the platform's MCP tools (mcp-loop.ts), for the
 * suites whose CLI the runner connects to /mcp. `moves`: a suite's own agents' moves, asked first
 * (undefined: the shared script, nextMove).
 */
export async function startOpenAILoop(
  cli: string,
  shellCall: (shell: string) => Reply,
  mcpCall?: (call: McpCall) => Call,
  moves?: (text: string, answered: number) => Move | undefined,
): Promise<{ loop: AgentLoop; fake: FakeOpenAI }> {
  const reply = (move: Move | { mcp: McpCall }): Reply => {
    if ("mcp" in move) {
      if (!mcpCall) throw new Error(`${cli}: no MCP calls scripted`);
      return { call: mcpCall(move.mcp) };
    }
    if ("shell" in move) return shellCall(move.shell);
    if ("fail" in move) return { error: { status: 400, message: "FAKE-REFUSAL: prompt too long" } };
    return move;
  };
  const fake = await startFakeOpenAI(
    (request) => {
      const text = requestText(request);
      const answered = callOutputs(request).length;
      return reply(
        moves?.(text, answered) ?? ((mcpCall && mcpMove(text, answered)) || nextMove(text, answered > 0)),
      );
    },
    { usage: USAGE },
  );
  const loop = await AgentLoop.start(cli, { ...fake, text: requestText });
  return { loop, fake };
}
