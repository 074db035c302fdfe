/**
 * `opencode_local`: OpenCode (`opencode-ai`), unattended:
 *
 *   opencode run --format json --thinking [--model <provider>/<model>] [--auto]
 *                [--title "switchboard run <run id>" | --session <session id>] [extraArgs…]
 *                                                        (the prompt on standard input)
 *
 * with OPENCODE_CONFIG_CONTENT (merged after the user's and the project's opencode.json; only an
 * administrator's managed config and an OpenCode console organisation's come later): the agent's
 * instructions and the platform protocol as an `instructions` file in the run's own directory,
 * the platform's MCP server (mcp.ts), the run's skills as `skills.paths` (<run dir>/skills/<slug>/SKILL.md, which OpenCode lists to the
 * model in its skill tool), sharing and auto-update off, and the model's provider pointed at
 * adapterConfig.provider.baseUrl when set; OPENCODE_DISABLE_AUTOUPDATE=1; OPENCODE_DISABLE_MODELS_FETCH=1
 * (the CLI knows models and prices from the list it ships with instead of fetching models.dev on
 * every run; the agent's env may set it to 0).
 *
 * `--auto` approves every permission request the config does not deny outright (without it `run`
 * rejects them, nobody being there to answer). The prompt goes on standard input: `run` quotes
 * message arguments that contain spaces. `--title` spares the request for a generated title (a
 * second model call, on the provider's small model). Sessions and config live under the agent's
 * HOME (~/.local/share/opencode, ~/.config/opencode), per agent; `--session` resumes one by its id
 * (`ses_…`). A session made in another folder must never be handed over: 1.18.33 resumes it, gets the
 * model's answer, and then prints nothing and never exits (the runner does not, agent-process.ts). OpenCode reports tokens and cost per step (opencode-stream.ts). Keys come from the
 * agent's env under the provider's usual names (OPENAI_API_KEY, ANTHROPIC_API_KEY, …).
 *
 * Flags, env and config keys checked against the installed 1.18.33 (`opencode run --help`, its bundle
 * and the requests it sent a fake Responses API). On its first run in a HOME the CLI installs its
 * plugin SDK into ~/.config/opencode from the npm registry, in the background; offline that fails
 * quietly and the run goes on.
 */
import path from "node:path";
import { z } from "zod";
import { argumentRefusal, CLI_CONFIG_FIELDS, EnvName, endVerdict, parseAdapterConfig } from "./cli-common.ts";
import { agentInstructions } from "./instructions.ts";
import { lastLine } from "./json.ts";
import { opencodeMcp, platformMcp } from "./mcp.ts";
import { opencodeStreamParser } from "./opencode-stream.ts";
import { chosenPrices, type Meter, meterFor } from "./pricing.ts";
import { skillFiles } from "./skills.ts";
import type { Adapter, Launch, LaunchContext, ProcessEnd, StreamSummary, Verdict } from "./types.ts";

const ConfigSchema = z
  .object({
    ...CLI_CONFIG_FIELDS,
    model: z
      .string()
      .max(200)
      .regex(/^[^/\s]+\/\S+$/, "must be <provider>/<model>, e.g. anthropic/claude-sonnet-4-5")
      .optional(),
    /** Default true (`--auto`): nobody answers a permission request, and the agent must run commands. */
    autoApprove: z.boolean().default(true),
    /**
     * An endpoint of one's own for the model's provider: a proxy or gateway of a provider OpenCode
     * knows (its own API and key variable), or, with `api: "openai-compatible"`, any server speaking
     * OpenAI's Chat Completions (Ollama, vLLM, OpenRouter, LiteLLM…) under the model's provider id,
     * its key from env[envKey] (a company secret, bound in adapterConfig.env).
     */
    provider: z
      .object({
        baseUrl: z.string().url(),
        api: z.enum(["native", "openai-compatible"]).default("native"),
        envKey: EnvName.optional(),
        /** How the provider is named in OpenCode (openai-compatible); default its id. */
        name: z.string().min(1).max(100).optional(),
      })
      .optional(),
    instructionsFilePath: z.string().min(1).optional(),
  })
  .refine((config) => !config.provider || config.model, {
    message: "provider needs a model (<provider>/<model>): it says whose base URL to change",
    path: ["provider"],
  });
type OpencodeConfig = z.infer<typeof ConfigSchema>;

const REJECTED_SESSION = /Session not found/;
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, "g");

function configOf(context: LaunchContext): OpencodeConfig {
  return parseAdapterConfig(ConfigSchema, "opencode_local", context);
}

/** "anthropic/claude-sonnet-4-5" as its provider and model; no model: OpenCode picks its default. */
function modelOf(config: OpencodeConfig): { provider: string | null; model: string | null } {
  if (!config.model) return { provider: null, model: null };
  const [provider = "", ...rest] = config.model.split("/");
  return { provider, model: rest.join("/") };
}

function cliConfig(
  context: LaunchContext,
  config: OpencodeConfig,
  instructionsPath: string,
  skillsDir: string | null,
): string {
  const { provider } = modelOf(config);
  const mcp = platformMcp(context.run);
  return JSON.stringify({
    autoupdate: false,
    share: "disabled",
    instructions: [instructionsPath],
    ...(skillsDir ? { skills: { paths: [skillsDir] } } : {}),
    // The platform as MCP tools (mcp.ts): the key stays in the environment.
    ...(mcp ? { mcp: opencodeMcp(mcp) } : {}),
    ...(config.provider && provider ? { provider: { [provider]: providerEntry(config) } } : {}),
  });
}

/**
 * OpenCode's `provider.<id>` entry. Native: only the base URL changes. OpenAI-compatible: the
 * provider is declared (the bundled @ai-sdk/openai-compatible, the key as OpenCode's `{env:…}`
 * reference so it stays out of the config, and the model, which OpenCode must know to run it).
 */
function providerEntry(config: OpencodeConfig): Record<string, unknown> {
  const { provider, model } = modelOf(config);
  const endpoint = config.provider;
  const options = {
    baseURL: endpoint?.baseUrl,
    ...(endpoint?.envKey ? { apiKey: `{env:${endpoint.envKey}}` } : {}),
  };
  if (endpoint?.api !== "openai-compatible") return { options };
  return {
    npm: "@ai-sdk/openai-compatible",
    name: endpoint.name ?? provider,
    options,
    models: model ? { [model]: { name: model } } : {},
  };
}

function meterOf(context: LaunchContext, config: OpencodeConfig): Meter {
  const { provider, model } = modelOf(config);
  const named = provider ?? "opencode";
  return meterFor(named, model, chosenPrices(config.pricing, context.run.modelPrices, named, model));
}

async function launch(context: LaunchContext): Promise<Launch> {
  const config = configOf(context);
  const instructions = await agentInstructions(context, config.instructionsFilePath);
  const instructionsPath = path.join(context.runDir, "instructions.md");
  const skillsDir = path.join(context.runDir, "skills");
  const skills = skillFiles(context.run, skillsDir);
  return {
    command: config.command ?? "opencode",
    args: [
      "run",
      "--format",
      "json",
      "--thinking",
      ...(config.model ? ["--model", config.model] : []),
      ...(config.autoApprove ? ["--auto"] : []),
      ...(context.resume
        ? ["--session", context.resume]
        : ["--title", `switchboard run ${context.run.runId}`]),
      ...config.extraArgs,
    ],
    env: {
      OPENCODE_CONFIG_CONTENT: cliConfig(
        context,
        config,
        instructionsPath,
        skills.length > 0 ? skillsDir : null,
      ),
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_MODELS_FETCH: "1",
    },
    stdin: context.run.prompt,
    files: [{ path: instructionsPath, content: instructions }, ...skills],
    meter: meterOf(context, config),
    ...(context.run.budgetCents ? { budgetCents: context.run.budgetCents } : {}),
  };
}

function verdict(end: ProcessEnd, summary: StreamSummary): Verdict {
  const stderr = end.stderrTail.replace(ANSI, "");
  const said = argumentRefusal(stderr, /^opencode run \[message\.\.\]/m) ?? lastLine(stderr);
  if (end.exitCode !== 0 && !summary.sessionId && REJECTED_SESSION.test(said))
    return {
      ok: false,
      sessionRejected: true,
      reason: `opencode rejected the session it was to resume (${said})`,
    };
  return endVerdict(
    { cli: "opencode", format: "run --format json", finalEvent: "step_finish" },
    end,
    summary,
    said || summary.garbage,
  );
}

export const opencodeLocalAdapter: Adapter = {
  type: "opencode_local",
  program: {
    command: "opencode",
    name: "OpenCode",
    install: "npm install -g opencode-ai",
    // `<provider>/<model>` of every provider it has credentials for, from the list it ships.
    models: {
      args: ["models"],
      env: { OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_AUTOUPDATE: "1" },
      parse: (stdout) =>
        stdout
          .split("\n")
          .map((line) => line.trim())
          .filter((line) => /^[^/\s]+\/\S+$/.test(line)),
    },
  },
  resumes: true,
  launch,
  parser: (launch) => opencodeStreamParser(launch.meter ?? meterFor("opencode", null), launch.budgetCents),
  verdict,
};
