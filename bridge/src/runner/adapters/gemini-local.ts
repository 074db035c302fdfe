/**
 * `gemini_local`: Google Gemini CLI (`@google/gemini-cli`), unattended:
 *
 *   gemini -p <prompt> --output-format stream-json --approval-mode <yolo> [-m <model>]
 *          --include-directories <runDir> [extraArgs…] [--resume <session id>]
 *
 * with GEMINI_CLI_SYSTEM_SETTINGS_PATH=<runDir>/settings.json (telemetry, usage statistics and update
 * checks off; the platform's MCP server (mcp.ts); the agent's instructions and the platform protocol loaded as memory from the included
 * runDir's GEMINI.md; the API-key auth type when a base URL is set) and GEMINI_CLI_TRUST_WORKSPACE=true
 * (an untrusted folder turns yolo back into "default", which waits for an approval nobody gives).
 * `--resume` takes the session's UUID as well as "latest" or an index; sessions live per project
 * (cwd) under the agent's ~/.gemini, so one made in another folder is rejected ("No previous sessions
 * found for this project") and the run starts afresh. A base URL of one's own (a proxy, a gateway) is
 * GOOGLE_GEMINI_BASE_URL, the key GEMINI_API_KEY, from the agent's env. The run's skills go under
 * a GEMINI_CLI_HOME of the run's own (skillsHome below says why).
 *
 * Flags, env and settings checked against the installed 0.61.0 (`gemini --help`, its bundle, and the
 * requests it sent a fake Gemini API). The CLI ignores a system settings file under a directory others
 * may write to (it says "Skipping system settings file" on stderr): RUNNER_WORK_DIR must not be under
 * /tmp for the settings to count. Gemini CLI reports tokens, not cost: the parser prices them
 * (pricing.ts); its counts are the run's own, also when it resumed a session.
 */
import path from "node:path";
import { z } from "zod";
import { argumentRefusal, CLI_CONFIG_FIELDS, endVerdict, parseAdapterConfig } from "./cli-common.ts";
import { geminiStreamParser } from "./gemini-stream.ts";
import { agentInstructions } from "./instructions.ts";
import { lastLine } from "./json.ts";
import { geminiMcpServers, type PlatformMcp, platformMcp } from "./mcp.ts";
import { chosenPrices, meterFor } from "./pricing.ts";
import { skillFiles } from "./skills.ts";
import {
  type Adapter,
  AdapterConfigError,
  type Launch,
  type LaunchContext,
  type ProcessEnd,
  type StreamSummary,
  type Verdict,
} from "./types.ts";

const ConfigSchema = z.object({
  ...CLI_CONFIG_FIELDS,
  /**
   * Default yolo: nobody answers an approval, and the agent must run shell commands (in any other mode
   * the CLI, run without a terminal, offers the model no shell tool: checked with 0.61.0).
   */
  approvalMode: z.enum(["yolo", "auto_edit", "default", "plan"]).default("yolo"),
  /** A Gemini API endpoint of one's own (GOOGLE_GEMINI_BASE_URL); the key from env GEMINI_API_KEY. */
  provider: z.object({ baseUrl: z.string().url() }).optional(),
  instructionsFilePath: z.string().min(1).optional(),
});
type GeminiConfig = z.infer<typeof ConfigSchema>;

/** Argument strings are capped by the kernel (128 KiB each); a longer prompt fails early. */
const PROMPT_MAX_CHARS = 100_000;
const REJECTED_SESSION = /Error resuming session|No previous sessions found/i;
const SETTINGS_SKIPPED = /Skipping system settings file[^\n]*/;

function configOf(context: LaunchContext): GeminiConfig {
  return parseAdapterConfig(ConfigSchema, "gemini_local", context);
}

function settingsOf(config: GeminiConfig, mcp: PlatformMcp | null): string {
  return JSON.stringify(
    {
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      context: { loadMemoryFromIncludeDirectories: true },
      // The platform as MCP tools (mcp.ts): the key stays in the environment.
      ...(mcp ? { mcpServers: geminiMcpServers(mcp) } : {}),
      // With GOOGLE_GEMINI_BASE_URL alone the CLI picks its "gateway" auth, which it then refuses.
      ...(config.provider ? { security: { auth: { selectedType: "gemini-api-key" } } } : {}),
    },
    null,
    2,
  );
}

/**
 * The run's skills where Gemini CLI finds a user's skills, ~/.agents/skills, under a home of the
 * run's own (GEMINI_CLI_HOME, which moves only the CLI's own files, not the HOME of the commands it
 * runs) whose .gemini links to the real one (sessions, settings, logins stay where they are): the
 * CLI reads skills only from ~/.gemini/skills, ~/.agents/skills, the workspace and extensions, and
 * the first two are shared by every agent on the runner.
 */
function skillsHome(context: LaunchContext): Pick<Launch, "files" | "links" | "overrideEnv"> {
  const home = path.join(context.runDir, "home");
  const files = skillFiles(context.run, path.join(home, ".agents", "skills"));
  if (files.length === 0) return { files };
  const realHome = context.run.env.GEMINI_CLI_HOME || context.home;
  return {
    files,
    links: [{ path: path.join(home, ".gemini"), target: path.join(realHome, ".gemini") }],
    overrideEnv: { GEMINI_CLI_HOME: home },
  };
}

const meterOf = (context: LaunchContext, config: GeminiConfig) => {
  const model = config.model ?? null;
  return meterFor("google", model, chosenPrices(config.pricing, context.run.modelPrices, "google", model));
};

async function launch(context: LaunchContext): Promise<Launch> {
  const config = configOf(context);
  const prompt = context.run.prompt;
  if (prompt.length > PROMPT_MAX_CHARS)
    throw new AdapterConfigError(`gemini_local: prompt longer than ${PROMPT_MAX_CHARS} characters`);
  const instructions = await agentInstructions(context, config.instructionsFilePath);
  const settings = path.join(context.runDir, "settings.json");
  const skills = skillsHome(context);
  return {
    command: config.command ?? "gemini",
    args: [
      "--prompt",
      prompt,
      "--output-format",
      "stream-json",
      "--approval-mode",
      config.approvalMode,
      ...(config.model ? ["--model", config.model] : []),
      "--include-directories",
      context.runDir,
      ...config.extraArgs,
      ...(context.resume ? ["--resume", context.resume] : []),
    ],
    env: {
      GEMINI_CLI_SYSTEM_SETTINGS_PATH: settings,
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      GEMINI_TELEMETRY_ENABLED: "false",
      ...(config.provider ? { GOOGLE_GEMINI_BASE_URL: config.provider.baseUrl } : {}),
    },
    ...(skills.overrideEnv ? { overrideEnv: skills.overrideEnv } : {}),
    stdin: "",
    files: [
      { path: settings, content: settingsOf(config, platformMcp(context.run)) },
      { path: path.join(context.runDir, "GEMINI.md"), content: instructions },
      ...skills.files,
    ],
    ...(skills.links ? { links: skills.links } : {}),
    meter: meterOf(context, config),
  };
}

function verdict(end: ProcessEnd, summary: StreamSummary): Verdict {
  const said = argumentRefusal(end.stderrTail, /^Usage: gemini /m) ?? lastLine(end.stderrTail);
  const rejected = end.stderrTail.split("\n").find((line) => REJECTED_SESSION.test(line));
  if (end.exitCode !== 0 && !summary.sessionId && rejected)
    return {
      ok: false,
      sessionRejected: true,
      reason: `gemini rejected the session it was to resume (${rejected.trim()})`,
    };
  // A settings file the CLI skipped explains most failures here (it then tries other logins).
  const skipped = end.stderrTail.match(SETTINGS_SKIPPED)?.[0];
  const words = [said || summary.garbage, skipped].filter(Boolean).join("; ");
  return endVerdict({ cli: "gemini", format: "stream-json", finalEvent: "result" }, end, summary, words);
}

export const geminiLocalAdapter: Adapter = {
  type: "gemini_local",
  program: { command: "gemini", name: "Gemini CLI", install: "npm install -g @google/gemini-cli" },
  resumes: true,
  launch,
  parser: (launch) => geminiStreamParser(launch.meter ?? meterFor("google", null)),
  verdict,
};
