/**
 * The runner's adapters, by adapterType: one module per CLI behind one interface (types.ts). The
 * legacy types coder_local and assistant_local, and any type this runner does not know, run as
 * `process` (today's generic command).
 */
import { claudeLocalAdapter } from "./claude-local.ts";
import { codexLocalAdapter } from "./codex-local.ts";
import { geminiLocalAdapter } from "./gemini-local.ts";
import { opencodeLocalAdapter } from "./opencode-local.ts";
import { processAdapter } from "./process.ts";
import type { Adapter } from "./types.ts";

export { LineSplitter } from "./lines.ts";
export {
  type Adapter,
  AdapterConfigError,
  type Launch,
  type LaunchContext,
  type ProcessEnd,
  type StreamParser,
  type StreamSummary,
  type Verdict,
} from "./types.ts";

const ADAPTERS: ReadonlyMap<string, Adapter> = new Map(
  [processAdapter, claudeLocalAdapter, codexLocalAdapter, geminiLocalAdapter, opencodeLocalAdapter].map(
    (adapter) => [adapter.type, adapter],
  ),
);

export const adapterFor = (adapterType: string): Adapter => ADAPTERS.get(adapterType) ?? processAdapter;

/** The CLIs this runner's adapters start, for the runner's report of what it found. */
export const adapterPrograms = (): Array<NonNullable<Adapter["program"]> & { adapterType: string }> =>
  [...ADAPTERS.values()].flatMap((adapter) =>
    adapter.program ? [{ ...adapter.program, adapterType: adapter.type }] : [],
  );
