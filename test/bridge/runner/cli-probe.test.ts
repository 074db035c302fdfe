// The runner asks each adapter's CLI for its version once, with the environment agents get: the real
// pinned claude answers; a PATH without it reports it missing (null), never an error.
import { describe, expect, it } from "vitest";
import { probeClis } from "../../../bridge/src/runner/cli-probe.ts";
import { agentCli } from "../../support/agent-clis.ts";

describe("probeClis", () => {
  it("reports the installed claude's version, and null where it is not installed", async () => {
    const claude = agentCli("claude");
    const found = await probeClis({ PATH: `${claude.binDir}:/usr/bin:/bin`, HOME: process.env.HOME });
    expect(found).toContainEqual({
      adapterType: "claude_local",
      command: "claude",
      version: `${claude.version} (Claude Code)`,
    });
    const missing = await probeClis({ PATH: "/nonexistent" });
    expect(missing).toContainEqual({ adapterType: "claude_local", command: "claude", version: null });
  });
});
