// The agent loop (agent-loop.ts) against the fake OpenAI Responses API, for the CLIs that talk to it
// (codex, opencode): every answer reports TOKENS_PER_REQUEST, a shell move is the CLI's own shell tool
// call, and a refusal is the API's 400.
import { AgentLoop, type Move, nextMove, TOKENS_PER_REQUEST } from "./agent-loop.ts";
import {
  callOutputs,
  type FakeOpenAI,
  type Reply,
  requestText,
  startFakeOpenAI,
} from "./fake-models/openai.ts";

const { input, cached, output } = TOKENS_PER_REQUEST;
const USAGE = { input_tokens: input, cached_tokens: cached, output_tokens: output };

export async function startOpenAILoop(
  cli: string,
  shellCall: (shell: string) => Reply,
): Promise<{ loop: AgentLoop; fake: FakeOpenAI }> {
  const reply = (move: Move): Reply => {
    if ("shell" in move) return shellCall(move.shell);
    if ("fail" in move) return { error: { status: 400, message: "FAKE-REFUSAL: prompt too long" } };
    return move;
  };
  const fake = await startFakeOpenAI(
    (request) => reply(nextMove(requestText(request), callOutputs(request).length > 0)),
    { usage: USAGE },
  );
  const loop = await AgentLoop.start(cli, { ...fake, text: requestText });
  return { loop, fake };
}
