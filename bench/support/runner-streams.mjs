// 1,000 lines of each agent CLI's stream output, built from the real thing. cli-streams/<cli>.jsonl is
// what the pinned CLI printed in the first test of test/bridge/runner/<cli>-local.test.ts (Claude Code
// 2.1.331 `--output-format stream-json --verbose`, Codex 0.169.0 `exec --json`, Gemini CLI 0.61.0
// `--output-format stream-json`, OpenCode 1.18.33 `run --format json`; only paths changed): a shell
// tool call, its result and a closing answer. Each stream keeps the CLI's opening and closing lines as
// printed and repeats the turn between them until it has 1,000 lines, each repetition with ids of its
// own (OpenCode's parser skips a part it has seen) and a heartbeat's content: a curl to the API for
// the command, an issue's JSON for its output, a sentence for the answer. The files also serve as the
// stub CLIs of the wake → spawn measurement (runner-spawn.mjs), which print them whole.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const STREAM_LINES = 1_000;

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "cli-streams");

/** adapterType → the CLI's captured output, and how many of its lines open and close the run. */
const CAPTURED = {
  claude_local: { file: "claude.jsonl", opening: 1, closing: 1 },
  codex_local: { file: "codex.jsonl", opening: 2, closing: 1 },
  gemini_local: { file: "gemini.jsonl", opening: 2, closing: 1 },
  // Two tool steps repeat; the closing step (its start, the answer, its finish) ends the run.
  opencode_local: { file: "opencode.jsonl", opening: 0, closing: 3 },
};

/** The captured output of `adapterType`'s CLI (a path), for a stub that prints it. */
export const capturedStream = (adapterType) => path.join(DIR, CAPTURED[adapterType].file);

const API = "http://127.0.0.1:8787/api";
const CURL = `curl -sf "${API}/issues/$PLATFORM_TASK_ID" -H "Authorization: Bearer $PLATFORM_API_KEY"`;
const TOOL_OUTPUT = JSON.stringify({
  id: "0b6e3f3c-8a57-4d2e-a4a0-5b2a9c0d7e11",
  identifier: "ENG-12",
  title: "Write the release notes",
  status: "in_progress",
  description: "Summarise the merged pull requests since the last tag. ".repeat(4),
});
const SENTENCE = "I checked the issue and its comments; next I will update the release notes and comment. ";

/** What the tests' model had the CLI do, and what a heartbeat does instead. */
const CONTENT = [
  ["echo ran-$PLATFORM_RUN_ID > marker.txt && echo TOOL-OK", CURL],
  ["TOOL-OK", TOOL_OUTPUT],
  ["All finished.", SENTENCE],
];
/** Fields that name one message, part, tool call or line: made unique in each repetition. */
const ID_KEYS = new Set(["id", "callID", "messageID", "tool_use_id", "tool_id", "uuid", "itemId"]);

/** `value` with the heartbeat's content, and its ids suffixed with `round` (null: ids kept). */
function rewrite(value, round, key = "") {
  if (typeof value === "string") {
    if (round !== null && ID_KEYS.has(key)) return `${value}-${round}`;
    return CONTENT.reduce((text, [from, to]) => text.replaceAll(from, to), value);
  }
  if (Array.isArray(value)) return value.map((item) => rewrite(item, round));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v, round, k)]));
  return value;
}

function stream({ file, opening, closing }) {
  const captured = readFileSync(path.join(DIR, file), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  const turn = captured.slice(opening, captured.length - closing);
  const lines = captured.slice(0, opening).map((line) => JSON.stringify(rewrite(line, null)));
  for (let round = 0; lines.length < STREAM_LINES - closing; round++)
    for (const line of turn) lines.push(JSON.stringify(rewrite(line, round)));
  lines.length = STREAM_LINES - closing;
  for (const line of captured.slice(captured.length - closing))
    lines.push(JSON.stringify(rewrite(line, null)));
  return lines;
}

/** adapterType → its 1,000 lines. */
export const STREAMS = Object.fromEntries(
  Object.entries(CAPTURED).map(([adapterType, capture]) => [adapterType, stream(capture)]),
);
