/**
 * `codex_local`: OpenAI Codex (`@openai/codex`), unattended:
 *
 *   codex exec --json --skip-git-repo-check --color never [-m <model>]
 *        --dangerously-bypass-approvals-and-sandbox | --sandbox <mode> -c approval_policy="<policy>"
 *        -c developer_instructions="<instructions + protocol>" -c check_for_update_on_startup=false
 *        -c web_search="disabled" [-c model_provider=switchboard -c model_providers.switchboard.…]
 *        [-c mcp_servers.switchboard.url=<edge>/mcp -c mcp_servers.switchboard.bearer_token_env_var=…]
 *        [-c shell_environment_policy.set.HOME=<the agent's HOME>] [extraArgs…] [resume <session>] -
 *                                                    (the prompt on standard input)
 *
 * Flags and config keys checked against the installed 0.169.0 (`codex exec --help`, the binary, and
 * the requests it sent a fake Responses API). Codex reports tokens, not cost: the parser prices them
 * (pricing.ts), minus what a resumed session had already counted (codex-sessions.ts). The run's
 * skills go under a HOME of the run's own (skillsHome below says why). Codex keeps threads under
 * $CODEX_HOME, not per folder: `resume` of a thread made in another folder works (in the run's cwd);
 * the runner still starts a fresh one there (agent-process.ts).
 */
import path from "node:path";
import { z } from "zod";
import { CLI_CONFIG_FIELDS, endVerdict, parseAdapterConfig, providerEndpoint } from "./cli-common.ts";
import { sessionTokens } from "./codex-sessions.ts";
import { codexStreamParser } from "./codex-stream.ts";
import { agentInstructions } from "./instructions.ts";
import { lastLine } from "./json.ts";
import { codexMcpOverrides, platformMcp } from "./mcp.ts";
import { chosenPrices, type Meter, meterFor, NO_TOKENS } from "./pricing.ts";
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
   * Default bypass (`--dangerously-bypass-approvals-and-sandbox`): nobody answers an approval, and the
   * agent must reach the platform's API, which Codex's workspace-write sandbox blocks.
   */
  sandbox: z.enum(["bypass", "read-only", "workspace-write", "danger-full-access"]).default("bypass"),
  approvalPolicy: z.enum(["never", "on-request", "on-failure", "untrusted"]).default("never"),
  /** A Responses API endpoint of one's own (a proxy, a gateway); the key from env[envKey]. */
  provider: providerEndpoint("OPENAI_API_KEY").optional(),
  instructionsFilePath: z.string().min(1).optional(),
});
type CodexConfig = z.infer<typeof ConfigSchema>;

/** Argument strings are capped by the kernel (128 KiB each); instructions longer than this fail early. */
const INSTRUCTIONS_MAX_CHARS = 100_000;
const REJECTED_SESSION = /no rollout found for thread id|thread\/resume failed/i;

function configOf(context: LaunchContext): CodexConfig {
  return parseAdapterConfig(ConfigSchema, "codex_local", context);
}

/** `-c key=value` pairs; a value is TOML, and a JSON string is a valid TOML basic string. */
const overrides = (pairs: ReadonlyArray<readonly [string, string]>): string[] =>
  pairs.flatMap(([key, value]) => ["-c", `${key}=${value}`]);

function policyArgs(config: CodexConfig): string[] {
  if (config.sandbox === "bypass") return ["--dangerously-bypass-approvals-and-sandbox"];
  return [
    "--sandbox",
    config.sandbox,
    ...overrides([["approval_policy", JSON.stringify(config.approvalPolicy)]]),
  ];
}

function providerArgs(config: CodexConfig): string[] {
  if (!config.provider) return [];
  // A provider of our own speaks HTTP+SSE (wire_api "responses"); the built-in one tries WebSockets.
  const key = "model_providers.switchboard";
  return overrides([
    ["model_provider", '"switchboard"'],
    [`${key}.name`, '"switchboard"'],
    [`${key}.base_url`, JSON.stringify(config.provider.baseUrl)],
    [`${key}.env_key`, JSON.stringify(config.provider.envKey)],
    [`${key}.wire_api`, '"responses"'],
  ]);
}

/** Where the CLI keeps its sessions: CODEX_HOME, else ~/.codex of the home the agent runs with. */
const codexHome = (context: LaunchContext): string =>
  context.run.env.CODEX_HOME || path.join(context.home, ".codex");

/**
 * The run's skills where Codex finds a user's skills, ~/.agents/skills, under a HOME of the run's
 * own: Codex 0.169 reads skills only from $CODEX_HOME/skills, ~/.agents/skills and the repository's
 * .agents/skills (not from --add-dir or skills.config paths), and the first two are shared by every
 * agent on the runner. The CLI keeps its real CODEX_HOME (sessions, login), and the commands it runs
 * get the real HOME back through shell_environment_policy.
 */
function skillsHome(
  context: LaunchContext,
): Pick<Launch, "files" | "links" | "overrideEnv"> & { args: string[] } {
  const home = path.join(context.runDir, "home");
  const files = skillFiles(context.run, path.join(home, ".agents", "skills"));
  if (files.length === 0) return { files, args: [] };
  const codex = codexHome(context);
  return {
    files,
    // The link makes the real CODEX_HOME when it is missing (Codex insists on one that exists).
    links: [{ path: path.join(home, ".codex"), target: codex }],
    overrideEnv: { HOME: home, CODEX_HOME: codex },
    args: overrides([["shell_environment_policy.set.HOME", JSON.stringify(context.home)]]),
  };
}

/**
 * The platform's MCP server as `-c mcp_servers.switchboard.…` overrides, like the rest of the run's
 * settings: nothing is written into the CODEX_HOME every agent of the runner shares, and the key
 * stays in the environment (bearer_token_env_var).
 */
function mcpArgs(context: LaunchContext): string[] {
  const mcp = platformMcp(context.run);
  return mcp ? overrides(codexMcpOverrides(mcp)) : [];
}

async function meterOf(context: LaunchContext, config: CodexConfig): Promise<Meter> {
  const before = context.resume
    ? await sessionTokens(codexHome(context), context.resume, context.readFileAsAgent)
    : NO_TOKENS;
  const model = config.model ?? null;
  return meterFor(
    "openai",
    model,
    chosenPrices(config.pricing, context.run.modelPrices, "openai", model),
    before,
  );
}

async function launch(context: LaunchContext): Promise<Launch> {
  const config = configOf(context);
  const instructions = await agentInstructions(context, config.instructionsFilePath);
  if (instructions.length > INSTRUCTIONS_MAX_CHARS)
    throw new AdapterConfigError(
      `codex_local: instructions longer than ${INSTRUCTIONS_MAX_CHARS} characters`,
    );
  const skills = skillsHome(context);
  return {
    command: config.command ?? "codex",
    args: [
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--color",
      "never",
      ...(config.model ? ["--model", config.model] : []),
      ...policyArgs(config),
      ...overrides([
        ["developer_instructions", JSON.stringify(instructions)],
        ["check_for_update_on_startup", "false"],
        ["web_search", '"disabled"'],
      ]),
      ...providerArgs(config),
      ...mcpArgs(context),
      ...skills.args,
      ...config.extraArgs,
      ...(context.resume ? ["resume", context.resume] : []),
      "-",
    ],
    env: {},
    ...(skills.overrideEnv ? { overrideEnv: skills.overrideEnv } : {}),
    stdin: context.run.prompt,
    files: skills.files,
    ...(skills.links ? { links: skills.links } : {}),
    meter: await meterOf(context, config),
  };
}

function verdict(end: ProcessEnd, summary: StreamSummary): Verdict {
  const said = lastLine(end.stderrTail);
  if (end.exitCode !== 0 && !summary.sessionId && REJECTED_SESSION.test(said))
    return {
      ok: false,
      sessionRejected: true,
      reason: `codex rejected the session it was to resume (${said})`,
    };
  return endVerdict({ cli: "codex", format: "exec --json", finalEvent: "turn.completed" }, end, summary);
}

const CatalogSchema = z.object({
  models: z.array(
    z.object({ slug: z.string(), visibility: z.string().optional(), priority: z.number().optional() }),
  ),
});

/** `codex debug models` JSON: the models its picker lists, by its priority. */
function codexModels(stdout: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return [];
  }
  const catalog = CatalogSchema.safeParse(parsed);
  if (!catalog.success) return [];
  return catalog.data.models
    .filter((model) => model.visibility === "list")
    .sort((a, b) => (a.priority ?? 0) - (b.priority ?? 0))
    .map((model) => model.slug);
}

export const codexLocalAdapter: Adapter = {
  type: "codex_local",
  program: {
    command: "codex",
    name: "OpenAI Codex",
    install: "npm install -g @openai/codex",
    // The catalogue this Codex ships (--bundled: no network), as its model picker shows it.
    models: { args: ["debug", "models", "--bundled"], parse: codexModels },
  },
  resumes: true,
  launch,
  parser: (launch) => codexStreamParser(launch.meter ?? meterFor("openai", null)),
  verdict,
};
