/**
 * Codex reports a thread's running token total, and a resumed thread goes on counting from where it
 * was. To charge a run only for its own tokens, the adapter reads the total the session had reached
 * from its rollout file ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl, the last
 * `token_count` event's info.total_token_usage; format of @openai/codex 0.169.0). Not found or not
 * readable: nothing is subtracted, so a run is charged too much rather than too little.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { count, isObject, typedLine } from "./json.ts";
import { NO_TOKENS, type TokenCounts } from "./pricing.ts";

async function entries(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort().reverse();
  } catch {
    return [];
  }
}

/** The session's rollout file: the newest days first, three directory levels (year, month, day). */
async function rolloutFile(codexHome: string, sessionId: string): Promise<string | null> {
  let dirs = [path.join(codexHome, "sessions")];
  for (let level = 0; level < 3; level++) {
    const next: string[] = [];
    for (const dir of dirs) for (const name of await entries(dir)) next.push(path.join(dir, name));
    dirs = next;
  }
  for (const dir of dirs) {
    const name = (await entries(dir)).find((file) => file.endsWith(`-${sessionId}.jsonl`));
    if (name) return path.join(dir, name);
  }
  return null;
}

function lastTotal(rollout: string): TokenCounts {
  let total = NO_TOKENS;
  for (const text of rollout.split("\n")) {
    if (!text.includes('"token_count"')) continue;
    const line = typedLine(text);
    const payload = line && isObject(line.payload) ? line.payload : null;
    const info = payload && isObject(payload.info) ? payload.info : null;
    const usage = info && isObject(info.total_token_usage) ? info.total_token_usage : null;
    if (usage)
      total = {
        input: count(usage.input_tokens),
        cached: count(usage.cached_input_tokens),
        output: count(usage.output_tokens),
      };
  }
  return total;
}

/** The tokens session `sessionId` had reported before this run; read as the agent (readFile). */
export async function sessionTokens(
  codexHome: string,
  sessionId: string,
  readFile: (file: string) => Promise<string>,
): Promise<TokenCounts> {
  const file = await rolloutFile(codexHome, sessionId);
  if (!file) return NO_TOKENS;
  try {
    return lastTotal(await readFile(file));
  } catch {
    return NO_TOKENS;
  }
}
