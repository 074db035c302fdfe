/**
 * The platform as MCP tools for a run's CLI: each adapter points its CLI at the edge's `/mcp` with
 * the run's agent key, in that CLI's own configuration format. The key is never written down: every
 * format names the environment variable that holds it (PLATFORM_API_KEY, the run-scoped key the edge
 * minted), which the CLI expands in its own process. What each CLI writes where, and its tool names:
 *
 *   Claude Code  <run dir>/mcp.json, `--mcp-config <file> --strict-mcp-config`; `${VAR}` in headers;
 *                tools mcp__switchboard__<tool>
 *   Codex        `-c mcp_servers.switchboard.…` overrides (no file); bearer_token_env_var; tools in a
 *                namespace mcp__switchboard
 *   Gemini CLI   mcpServers in the run's system settings file (<run dir>/settings.json); `${VAR}` in
 *                headers; tools mcp_switchboard_<tool>
 *   OpenCode     mcp in OPENCODE_CONFIG_CONTENT (no file); `{env:VAR}` in headers; tools
 *                switchboard_<tool>
 *
 * Formats checked against the pinned CLIs (/work/shared/reference/mcp.md §4 and the e2e suites).
 */
import type { RunAssignment } from "../../protocol/runner.ts";

/** The server's name in every CLI's configuration, and so the prefix of its tool names. */
export const MCP_SERVER_NAME = "switchboard";
/** The run's environment variable holding its agent key; configurations reference it by name. */
export const MCP_KEY_VAR = "PLATFORM_API_KEY";

export interface PlatformMcp {
  /** The edge's MCP endpoint, e.g. https://example.com/mcp. */
  url: string;
  /** The environment variable with the key to send as `Authorization: Bearer`. */
  keyVar: string;
}

/**
 * The run's MCP endpoint: PLATFORM_API_URL with its `/api` swapped for `/mcp` (the edge serves both
 * at its root, also behind a path prefix); null when the run has no API URL or no key (a run
 * assigned without them gets no MCP server rather than one that answers 401).
 */
export function platformMcp(run: Pick<RunAssignment, "env">): PlatformMcp | null {
  const api = run.env.PLATFORM_API_URL;
  if (!api || !run.env[MCP_KEY_VAR]) return null;
  let url: URL;
  try {
    url = new URL(api);
  } catch {
    return null;
  }
  url.pathname = `${url.pathname.replace(/\/+$/, "").replace(/\/api$/, "")}/mcp`;
  url.search = "";
  url.hash = "";
  return { url: url.toString(), keyVar: MCP_KEY_VAR };
}

/** Claude Code's --mcp-config file (`"type"` is required: without it the entry is skipped silently). */
export function claudeMcpConfig(mcp: PlatformMcp): string {
  return JSON.stringify({
    mcpServers: {
      [MCP_SERVER_NAME]: {
        type: "http",
        url: mcp.url,
        headers: { Authorization: `Bearer \${${mcp.keyVar}}` },
      },
    },
  });
}

/** Claude Code's permission rule for every tool of the server. */
export const CLAUDE_MCP_TOOLS = `mcp__${MCP_SERVER_NAME}`;

/**
 * Codex's config keys as `-c` overrides (key, TOML value). Approval "approve": `codex exec` runs with
 * approval policy never, and an MCP call that needs approval then fails ("requires approval").
 */
export function codexMcpOverrides(mcp: PlatformMcp): Array<[string, string]> {
  const key = `mcp_servers.${MCP_SERVER_NAME}`;
  return [
    [`${key}.url`, JSON.stringify(mcp.url)],
    [`${key}.bearer_token_env_var`, JSON.stringify(mcp.keyVar)],
    [`${key}.default_tools_approval_mode`, '"approve"'],
  ];
}

/**
 * Gemini CLI's `mcpServers` settings. `trust: true`: headless, the CLI offers an untrusted server's
 * tools to nobody (GEMINI_CLI_TRUST_WORKSPACE, set by the adapter, keeps MCP on in the folder).
 */
export function geminiMcpServers(mcp: PlatformMcp): Record<string, unknown> {
  return {
    [MCP_SERVER_NAME]: {
      httpUrl: mcp.url,
      headers: { Authorization: `Bearer \${${mcp.keyVar}}` },
      trust: true,
    },
  };
}

/**
 * OpenCode's `mcp` config. `oauth: false`: a 401 (the run ended) is an error, not OAuth discovery.
 * Its timeout (connect, list, each call) stays OpenCode's default, 30 s in 1.18.33.
 */
export function opencodeMcp(mcp: PlatformMcp): Record<string, unknown> {
  return {
    [MCP_SERVER_NAME]: {
      type: "remote",
      url: mcp.url,
      headers: { Authorization: `Bearer {env:${mcp.keyVar}}` },
      oauth: false,
    },
  };
}
