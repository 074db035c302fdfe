// An impostor for the CLI adapters' end-to-end suites: a program named like the CLI, first on the
// agent's PATH, that does what a model's first tool call would (checks the issue out through the API)
// and then prints a sentence instead of the CLI's JSON stream and exits 0, as a CLI whose output
// format changed, or something else installed under its name, would.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type AgentLoop, CHECKOUT_ONLY, expectReleased, type Run, suffix } from "./agent-loop.ts";

/** What the impostor prints once it holds the issue. */
export const impostorWords = (cli: string) => `I checked it out, but I am not ${cli}.`;

/** A directory under the loop's scratch holding the impostor `cli`, for the front of a PATH. */
function impostorDir(loop: AgentLoop, cli: string): string {
  const dir = path.join(loop.scratch, `impostor-${cli}`);
  mkdirSync(dir, { recursive: true });
  // The prompt on stdin is read and ignored; nothing is printed unless the checkout succeeded.
  const script = `#!/bin/sh\ncat >/dev/null\n${CHECKOUT_ONLY} || exit 3\necho '${impostorWords(cli)}'\n`;
  writeFileSync(path.join(dir, cli), script, { mode: 0o755 });
  return dir;
}

/**
 * An agent of `adapterType` whose `cli` on its PATH is the impostor: its run holds the issue, then
 * fails with `reason` (the adapter's words for output that is not its CLI's), and the issue is released.
 */
export async function expectImpostorReleased(
  loop: AgentLoop,
  adapterType: string,
  cli: string,
  reason: string,
): Promise<Run> {
  const agent = await loop.agent(`Impostor ${suffix()}`, adapterType, {
    env: { PATH: `${impostorDir(loop, cli)}:${process.env.PATH ?? ""}` },
  });
  return expectReleased(loop, agent, "failed", reason, "error");
}
