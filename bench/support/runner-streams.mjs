// 1,000 lines of each agent CLI's stream output, shaped like a real heartbeat run: an init line, then
// turns of assistant text, thinking, a shell tool call and its result, and the closing result line.
// The shapes follow the runner's parsers (bridge/src/runner/adapters/*-stream.ts), which were written
// against the real CLIs' output (claude stream-json, codex exec --json, gemini stream-json).

export const STREAM_LINES = 1_000;

const SESSION = "7f1c2a4e-1b7d-4a8e-9c55-0e3b2d1f6a90";
const API = "http://127.0.0.1:8787/api";
const TOOL_OUTPUT = JSON.stringify({
  id: "0b6e3f3c-8a57-4d2e-a4a0-5b2a9c0d7e11",
  identifier: "ENG-12",
  title: "Write the release notes",
  status: "in_progress",
  description: "Summarise the merged pull requests since the last tag. ".repeat(4),
});
const SENTENCE = "I checked the issue and its comments; next I will update the release notes and comment. ";

/** `first`, then `body(i)` cycled until one line is left for `last`. */
function stream(first, body, last) {
  const lines = [JSON.stringify(first)];
  for (let i = 0; lines.length < STREAM_LINES - 1; i++)
    lines.push(...body(i).map((line) => JSON.stringify(line)));
  lines.length = STREAM_LINES - 1;
  lines.push(JSON.stringify(last));
  return lines;
}

function claude() {
  const model = "claude-sonnet-4-5-20250929";
  const message = (content) => ({
    type: "assistant",
    message: {
      id: "msg_01",
      model,
      role: "assistant",
      content,
      usage: { input_tokens: 12, output_tokens: 80 },
    },
    session_id: SESSION,
  });
  return stream(
    {
      type: "system",
      subtype: "init",
      session_id: SESSION,
      model,
      cwd: "/work/repo",
      tools: ["Bash", "Read"],
    },
    (i) => [
      message([{ type: "thinking", thinking: SENTENCE.repeat(2) }]),
      message([{ type: "text", text: SENTENCE }]),
      message([
        { type: "tool_use", id: `toolu_${i}`, name: "Bash", input: { command: `curl -s ${API}/issues/x` } },
      ]),
      {
        type: "user",
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: TOOL_OUTPUT }],
        },
        session_id: SESSION,
      },
    ],
    {
      type: "result",
      subtype: "success",
      is_error: false,
      result: SENTENCE,
      session_id: SESSION,
      num_turns: 250,
      total_cost_usd: 0.4213,
      usage: {
        input_tokens: 3000,
        cache_creation_input_tokens: 1000,
        cache_read_input_tokens: 9000,
        output_tokens: 20000,
      },
      modelUsage: { [model]: {} },
    },
  );
}

function codex() {
  const completed = (item) => ({ type: "item.completed", item });
  return stream(
    { type: "thread.started", thread_id: SESSION },
    (i) => [
      completed({ id: `item_${i}a`, type: "reasoning", text: SENTENCE.repeat(2) }),
      completed({ id: `item_${i}b`, type: "agent_message", text: SENTENCE }),
      {
        type: "item.started",
        item: {
          id: `item_${i}c`,
          type: "command_execution",
          command: `curl -s ${API}/issues/x`,
          status: "in_progress",
        },
      },
      completed({
        id: `item_${i}c`,
        type: "command_execution",
        command: `curl -s ${API}/issues/x`,
        aggregated_output: TOOL_OUTPUT,
        exit_code: 0,
        status: "completed",
      }),
    ],
    {
      type: "turn.completed",
      usage: { input_tokens: 13000, cached_input_tokens: 9000, output_tokens: 20000 },
    },
  );
}

function gemini() {
  return stream(
    { type: "init", timestamp: "2026-01-01T00:00:00.000Z", session_id: SESSION, model: "gemini-2.5-pro" },
    (i) => [
      { type: "message", role: "assistant", content: SENTENCE, delta: true },
      { type: "message", role: "assistant", content: SENTENCE, delta: true },
      {
        type: "tool_use",
        tool_name: "run_shell_command",
        tool_id: `tool_${i}`,
        parameters: { command: `curl -s ${API}` },
      },
      { type: "tool_result", tool_id: `tool_${i}`, status: "success", output: TOOL_OUTPUT },
    ],
    {
      type: "result",
      status: "success",
      stats: {
        total_tokens: 33000,
        input_tokens: 13000,
        cached: 9000,
        output_tokens: 20000,
        duration_ms: 60000,
      },
    },
  );
}

/** adapterType → its 1,000 lines. */
export const STREAMS = { claude_local: claude(), codex_local: codex(), gemini_local: gemini() };
