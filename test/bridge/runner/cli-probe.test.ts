// The runner asks each adapter's CLI for its version once, with the environment agents get: the real
// pinned Claude Code, Gemini CLI and OpenCode answer with their versions; a PATH without them reports
// them missing (null), never an error. The real Codex and OpenCode also list their models (Codex its bundled catalogue as its picker shows it, OpenCode
// `<provider>/<model>` of the providers it can reach).
import { mkdtempSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { probeClis, withModels } from "../../../bridge/src/runner/cli-probe.ts";
import { agentCli } from "../../support/agent-clis.ts";

type CliPin = ReturnType<typeof agentCli>;

describe("probeClis", () => {
  it("reports the installed CLIs' versions, and null where they are not installed", {
    timeout: 60_000,
  }, async () => {
    const [claude, gemini, opencode] = ["claude", "gemini", "opencode"].map(agentCli) as [
      CliPin,
      CliPin,
      CliPin,
    ];
    const found = await probeClis({
      PATH: `${claude.binDir}:${gemini.binDir}:${opencode.binDir}:/usr/bin:/bin`,
      HOME: process.env.HOME,
    });
    expect(found).toContainEqual({
      adapterType: "claude_local",
      command: "claude",
      version: `${claude.version} (Claude Code)`,
    });
    expect(found).toContainEqual({ adapterType: "gemini_local", command: "gemini", version: gemini.version });
    expect(found).toContainEqual({
      adapterType: "opencode_local",
      command: "opencode",
      version: opencode.version,
    });
    const missing = await probeClis({ PATH: "/nonexistent" });
    for (const [adapterType, command] of [
      ["claude_local", "claude"],
      ["gemini_local", "gemini"],
      ["opencode_local", "opencode"],
    ])
      expect(missing).toContainEqual({ adapterType, command, version: null });
  });

  it("reports the models Codex and OpenCode list", { timeout: 60_000 }, async () => {
    const codex = agentCli("codex");
    const opencode = agentCli("opencode");
    const home = mkdtempSync(path.join(homedir(), ".cache", "cli-probe-"));
    try {
      const env = { PATH: `${codex.binDir}:${opencode.binDir}:/usr/bin:/bin`, HOME: home };
      const found = await withModels(await probeClis(env), env);
      const codexFound = found.find((cli) => cli.adapterType === "codex_local");
      expect(codexFound?.version).toContain(codex.version);
      // Codex 0.169's picker order, its default first; hidden models are not offered.
      expect(codexFound?.models?.slice(0, 3)).toEqual(["gpt-6.1-sol", "gpt-6-astra", "gpt-6-sol"]);
      expect(codexFound?.models).toContain("gpt-5.5");
      expect(codexFound?.models).not.toContain("codex-auto-review");
      const opencodeFound = found.find((cli) => cli.adapterType === "opencode_local");
      expect(opencodeFound?.models?.length).toBeGreaterThan(0);
      expect(opencodeFound?.models?.every((id) => /^[^/\s]+\/\S+$/.test(id))).toBe(true);
      // Claude Code and Gemini CLI have no command that lists models: the static catalogue serves them.
      expect(found.find((cli) => cli.adapterType === "claude_local")).not.toHaveProperty("models");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
