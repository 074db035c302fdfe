// The platform's MCP server in each CLI's configuration (bridge/src/runner/adapters/mcp.ts): a run
// with an API URL and its agent key gets `<edge>/mcp` with `Authorization: Bearer <the key>` in the
// form its CLI reads; the key itself is never in a file, an argument or the adapter's env (only a
// reference to PLATFORM_API_KEY, which the CLI expands); the files live in the run's own directory
// and are gone when the run ends. A run without a key gets no MCP server. The real CLIs using these
// configurations: test/e2e/control-claude-local.test.ts and control-codex-local.test.ts.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunAssignment } from "../../../bridge/src/protocol/runner.ts";
import { adapterFor, type Launch } from "../../../bridge/src/runner/adapters/index.ts";
import { platformMcp } from "../../../bridge/src/runner/adapters/mcp.ts";
import { executeRun } from "./execute-run.ts";

const root = mkdtempSync(path.join(tmpdir(), "mcp-config-test-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const KEY = "swa_run_key_SECRET_1234567890";
const API = "https://edge.test/api";
const MCP = "https://edge.test/mcp";
const runDir = path.join(root, "run");

function run(adapterType: string, env: Record<string, string>, config: Record<string, unknown> = {}) {
  return {
    runId: "run-1",
    agentId: "agent-1",
    adapterType,
    command: "",
    args: [],
    cwd: root,
    prompt: "Do the task.",
    timeoutSec: 30,
    env,
    adapterConfig: config,
    protocol: "PROTOCOL",
  } satisfies RunAssignment;
}

const withKey = { PLATFORM_API_URL: API, PLATFORM_API_KEY: KEY };

function launch(adapterType: string, env: Record<string, string> = withKey, config = {}): Promise<Launch> {
  return adapterFor(adapterType).launch({
    run: run(adapterType, env, config),
    cwd: root,
    runDir,
    home: path.join(root, "home"),
    resume: null,
    readFileAsAgent: () => Promise.reject(new Error("not used")),
  });
}

const file = (launched: Launch, name: string): unknown => {
  const found = launched.files.find((entry) => entry.path === path.join(runDir, name));
  return found ? JSON.parse(found.content) : undefined;
};

/** `-c key=value` overrides of a Codex command line, as a map. */
const codexOverrides = (args: string[]): Record<string, string> =>
  Object.fromEntries(
    args.flatMap((arg, i) => (args[i - 1] === "-c" ? [arg.split(/=(.*)/s).slice(0, 2)] : [])),
  );

describe("the platform's MCP server in each CLI's configuration", () => {
  it("derives <edge>/mcp from PLATFORM_API_URL, also under a path prefix; nothing without a key", () => {
    expect(platformMcp({ env: withKey })).toEqual({ url: MCP, keyVar: "PLATFORM_API_KEY" });
    expect(
      platformMcp({ env: { PLATFORM_API_URL: "http://127.0.0.1:8787/sb/api/", PLATFORM_API_KEY: KEY } }),
    ).toEqual({ url: "http://127.0.0.1:8787/sb/mcp", keyVar: "PLATFORM_API_KEY" });
    expect(platformMcp({ env: { PLATFORM_API_URL: API } })).toBeNull();
    expect(platformMcp({ env: { PLATFORM_API_KEY: KEY } })).toBeNull();
  });

  it("claude: <run dir>/mcp.json, --mcp-config with --strict-mcp-config, the header a reference to the key variable", async () => {
    const launched = await launch("claude_local");
    const config = path.join(runDir, "mcp.json");
    expect(launched.args.join(" ")).toContain(`--mcp-config ${config} --strict-mcp-config`);
    expect(file(launched, "mcp.json")).toEqual({
      mcpServers: {
        switchboard: {
          type: "http",
          url: MCP,
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code's own ${VAR} syntax
          headers: { Authorization: "Bearer ${PLATFORM_API_KEY}" },
        },
      },
    });
    expect(JSON.stringify(launched)).not.toContain(KEY);
  });

  it("claude outside bypassPermissions: the server's tools are allowed next to the agent's own", async () => {
    const launched = await launch("claude_local", withKey, {
      permissionMode: "acceptEdits",
      allowedTools: ["Bash"],
    });
    const at = launched.args.indexOf("--allowedTools");
    expect(launched.args[at + 1]).toBe("Bash,mcp__switchboard");
    const bare = await launch("claude_local", withKey, { permissionMode: "dontAsk" });
    expect(bare.args[bare.args.indexOf("--allowedTools") + 1]).toBe("mcp__switchboard");
  });

  it("codex: mcp_servers.switchboard overrides with bearer_token_env_var and approval, no file", async () => {
    const launched = await launch("codex_local");
    expect(codexOverrides(launched.args)).toMatchObject({
      "mcp_servers.switchboard.url": JSON.stringify(MCP),
      "mcp_servers.switchboard.bearer_token_env_var": '"PLATFORM_API_KEY"',
      "mcp_servers.switchboard.default_tools_approval_mode": '"approve"',
    });
    expect(launched.files.some((entry) => entry.path.endsWith(".toml"))).toBe(false);
    expect(JSON.stringify(launched)).not.toContain(KEY);
  });

  it("gemini: mcpServers in the run's settings.json, trusted, the header a reference to the key variable", async () => {
    const launched = await launch("gemini_local");
    expect(file(launched, "settings.json")).toMatchObject({
      mcpServers: {
        switchboard: {
          httpUrl: MCP,
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Gemini CLI's own ${VAR} syntax
          headers: { Authorization: "Bearer ${PLATFORM_API_KEY}" },
          trust: true,
        },
      },
    });
    expect(launched.env.GEMINI_CLI_TRUST_WORKSPACE).toBe("true");
    expect(JSON.stringify(launched)).not.toContain(KEY);
  });

  it("opencode: mcp in OPENCODE_CONFIG_CONTENT, remote, no OAuth, the header an {env:VAR} reference", async () => {
    const launched = await launch("opencode_local");
    expect(JSON.parse(launched.env.OPENCODE_CONFIG_CONTENT ?? "{}")).toMatchObject({
      mcp: {
        switchboard: {
          type: "remote",
          url: MCP,
          headers: { Authorization: "Bearer {env:PLATFORM_API_KEY}" },
          oauth: false,
        },
      },
    });
    expect(JSON.stringify(launched)).not.toContain(KEY);
  });

  it("a run without an agent key gets no MCP server in any CLI", async () => {
    const env = { PLATFORM_API_URL: API };
    expect((await launch("claude_local", env)).args).not.toContain("--mcp-config");
    expect((await launch("codex_local", env)).args.join(" ")).not.toContain("mcp_servers");
    expect(file(await launch("gemini_local", env), "settings.json")).not.toHaveProperty("mcpServers");
    const opencode = JSON.parse((await launch("opencode_local", env)).env.OPENCODE_CONFIG_CONTENT ?? "{}");
    expect(opencode).not.toHaveProperty("mcp");
  });

  it("the file exists while the CLI runs, holds no key, and is gone with the run's directory", async () => {
    // A stand-in `claude` that shows the --mcp-config file it was given.
    const cli = path.join(root, "show-mcp-config.sh");
    writeFileSync(
      cli,
      '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = --mcp-config ] && echo "FILE $2" && cat "$2"; shift; done\n',
      { mode: 0o755 },
    );
    const assignment = run("claude_local", { ...withKey, HOME: path.join(root, "home") }, { command: cli });
    const { stdout } = await executeRun(assignment, root);
    const shown = stdout.match(/^FILE (.+)$/m)?.[1];
    expect(shown, stdout).toBe(path.join(root, ".runs", "run-1", "mcp.json"));
    expect(stdout).toContain(`"url":"${MCP}"`);
    expect(stdout).not.toContain(KEY);
    expect(existsSync(shown ?? "")).toBe(false);
  });
});
