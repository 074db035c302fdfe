/**
 * `claude_local`: Claude Code (`@anthropic-ai/claude-code`), unattended:
 *
 *   claude --print --output-format stream-json --verbose [--resume <session>] [--model <m>]
 *          --append-system-prompt-file <run dir>/system-prompt.md [--add-dir <run dir>]
 *          [--mcp-config <run dir>/mcp.json --strict-mcp-config]
 *          --dangerously-skip-permissions | --permission-mode <mode> [--allowedTools <a,b>]
 *          [--max-turns <n>] [--max-budget-usd <run's budget>] [extraArgs…]
 *                                                    (the prompt on standard input)
 *
 * The appended system prompt is the agent's instructions file plus the platform's heartbeat protocol.
 * The run's skills (the platform's and the agent's company skills) are <run dir>/.claude/skills/<slug>/
 * SKILL.md: Claude Code loads the skills of an --add-dir directory (since 2.1.32) and lists them to
 * the model with its Skill tool, so nothing is written into the project or the shared ~/.claude.
 * The platform's MCP server (mcp.ts) is the run's only MCP server; Claude Code defers MCP tools
 * (names listed to the model, schemas loaded through its ToolSearch), which is left as it is.
 * Cost, tokens and the session id come from the CLI's own stream (claude-stream.ts: the run's own
 * figures, not the session's running total a resumed session carries on); an agent's own
 * adapterConfig.pricing prices the run's tokens instead of Claude's reported cost (as for the other
 * CLIs: one meaning for the field everywhere, for a negotiated rate or a gateway that bills its own). The CLI's
 * non-essential traffic (telemetry, auto-update, error reports) is off unless adapterConfig.env turns
 * it back on. Flags checked against the installed 2.1.331 (`claude --help` and the binary).
 */
import path from "node:path";
import { z } from "zod";
import { claudeStreamParser } from "./claude-stream.ts";
import { CLI_CONFIG_FIELDS, endVerdict, parseAdapterConfig, providerEndpoint } from "./cli-common.ts";
import { agentInstructions } from "./instructions.ts";
import { CLAUDE_MCP_TOOLS, claudeMcpConfig, platformMcp } from "./mcp.ts";
import { chosenPrices, meterFor } from "./pricing.ts";
import { skillFiles } from "./skills.ts";
import type { Adapter, Launch, LaunchContext, ProcessEnd, StreamSummary, Verdict } from "./types.ts";

/** `--permission-mode` choices of the CLI; bypassPermissions is `--dangerously-skip-permissions`. */
export const CLAUDE_PERMISSION_MODES = [
  "bypassPermissions",
  "acceptEdits",
  "auto",
  "default",
  "dontAsk",
  "plan",
] as const;

const ConfigSchema = z.object({
  ...CLI_CONFIG_FIELDS,
  /** Default bypassPermissions: nobody is there to answer a permission prompt. */
  permissionMode: z.enum(CLAUDE_PERMISSION_MODES).default("bypassPermissions"),
  allowedTools: z.array(z.string().min(1)).optional(),
  maxTurns: z.number().int().min(1).max(10_000).optional(),
  instructionsFilePath: z.string().min(1).optional(),
  /**
   * An Anthropic-compatible endpoint (a gateway, a proxy, another vendor's Messages API): Claude Code
   * gets it as ANTHROPIC_BASE_URL, and the key from env[envKey] as ANTHROPIC_API_KEY.
   */
  provider: providerEndpoint("ANTHROPIC_API_KEY").optional(),
});
type ClaudeConfig = z.infer<typeof ConfigSchema>;

/** Quiet by default: an agent's CLI talks to its model API and nothing else. */
const QUIET_ENV = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_ERROR_REPORTING: "1",
};

const ROOT_REFUSAL = "--dangerously-skip-permissions cannot be used with root/sudo privileges";
const REJECTED_SESSION = [/No conversation found with session ID/i, /--resume requires a valid session/i];

/** The provider's endpoint and key under the names Claude Code reads. */
function providerEnv(config: ClaudeConfig, context: LaunchContext): Record<string, string> {
  if (!config.provider) return {};
  const key = context.run.env[config.provider.envKey];
  return { ANTHROPIC_BASE_URL: config.provider.baseUrl, ...(key ? { ANTHROPIC_API_KEY: key } : {}) };
}

function configOf(context: LaunchContext): ClaudeConfig {
  return parseAdapterConfig(ConfigSchema, "claude_local", context);
}

/**
 * The permission flags; with the platform's MCP server its tools are allowed too (in any mode but
 * bypass, an MCP call nobody approved is a permission denial).
 */
function permissionArgs(config: ClaudeConfig, withMcp: boolean): string[] {
  const bypass = config.permissionMode === "bypassPermissions";
  const mode = bypass ? ["--dangerously-skip-permissions"] : ["--permission-mode", config.permissionMode];
  const allowed = [...(config.allowedTools ?? []), ...(withMcp && !bypass ? [CLAUDE_MCP_TOOLS] : [])];
  return allowed.length ? [...mode, "--allowedTools", allowed.join(",")] : mode;
}

/**
 * The platform's MCP server as the only one (--strict-mcp-config: the user's and the project's
 * servers are not this run's), from a file in the run's directory; none when the run has no key.
 */
function mcpLaunch(context: LaunchContext): { args: string[]; files: Launch["files"] } {
  const mcp = platformMcp(context.run);
  if (!mcp) return { args: [], files: [] };
  const file = path.join(context.runDir, "mcp.json");
  return {
    args: ["--mcp-config", file, "--strict-mcp-config"],
    files: [{ path: file, content: claudeMcpConfig(mcp) }],
  };
}

async function launch(context: LaunchContext): Promise<Launch> {
  const config = configOf(context);
  const promptFile = path.join(context.runDir, "system-prompt.md");
  const skills = skillFiles(context.run, path.join(context.runDir, ".claude", "skills"));
  const mcp = mcpLaunch(context);
  return {
    command: config.command ?? "claude",
    args: [
      "--print",
      "--output-format",
      "stream-json",
      "--verbose",
      ...(context.resume ? ["--resume", context.resume] : []),
      ...(config.model ? ["--model", config.model] : []),
      "--append-system-prompt-file",
      promptFile,
      // The run's skills: Claude Code loads .claude/skills of every --add-dir directory.
      ...(skills.length > 0 ? ["--add-dir", context.runDir] : []),
      ...mcp.args,
      ...permissionArgs(config, mcp.files.length > 0),
      ...(config.maxTurns ? ["--max-turns", String(config.maxTurns)] : []),
      // The CLI stops itself once the run's own calls cost this much (it counts only this run's
      // spend, also after a resume): the budget is enforced during the run, not only after it.
      ...(context.run.budgetCents ? ["--max-budget-usd", (context.run.budgetCents / 100).toFixed(2)] : []),
      ...config.extraArgs,
    ],
    env: { ...QUIET_ENV, ...providerEnv(config, context) },
    stdin: context.run.prompt,
    files: [
      { path: promptFile, content: await agentInstructions(context, config.instructionsFilePath) },
      ...skills,
      ...mcp.files,
    ],
    meter: meterFor(
      "anthropic",
      config.model ?? null,
      chosenPrices(config.pricing, context.run.modelPrices, "anthropic", config.model ?? null),
    ),
    resumed: context.resume !== null,
  };
}

function verdict(end: ProcessEnd, summary: StreamSummary): Verdict {
  if (end.stderrTail.includes(ROOT_REFUSAL))
    return {
      ok: false,
      reason:
        "claude refuses permissionMode bypassPermissions (--dangerously-skip-permissions) as root: run " +
        "the runner with RUNNER_RUN_AS=<user>, or choose another adapterConfig.permissionMode (with " +
        "allowedTools); on a sandboxed machine adapterConfig.env IS_SANDBOX=1 allows it",
    };
  if (summary.budgetExceeded)
    return {
      ok: false,
      reason: `budget_exceeded: claude stopped at the run's budget (${summary.resultError ?? "maximum budget reached"})`,
    };
  const error = summary.resultError;
  if (error && REJECTED_SESSION.some((pattern) => pattern.test(error)))
    return {
      ok: false,
      sessionRejected: true,
      reason: `claude rejected the session it was to resume (${error})`,
    };
  return endVerdict({ cli: "claude", format: "stream-json", finalEvent: "result" }, end, summary);
}

export const claudeLocalAdapter: Adapter = {
  type: "claude_local",
  program: {
    command: "claude",
    name: "Claude Code",
    install: "npm install -g @anthropic-ai/claude-code",
  },
  resumes: true,
  launch,
  parser: (launch) =>
    claudeStreamParser(launch.meter ?? meterFor("anthropic", null), launch.resumed === true),
  verdict,
};
