import type { RunSkill } from "../../../bridge/src/protocol/runner";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import type { AgentRow, HeartbeatRunRow, JsonObject } from "../../db/schema";
import { PLATFORM_SKILL_SLUG } from "../../llms/platform-skill";
import { heartbeatProtocolText, platformEnvText } from "../../llms/protocol";
import { resolveSecretEnv } from "../secrets";
import { runSkills } from "./skills";

/** What a local adapter's process is started with, from the agent's adapterConfig. */
export interface PreparedRun {
  command: string;
  args: string[];
  cwd: string | null;
  prompt: string;
  timeoutSec: number | null;
  env: Record<string, string>;
  /** The runner adapter's own options: adapterConfig without env (resolved above) and promptTemplate. */
  adapterConfig: JsonObject;
  /** The heartbeat protocol with this edge's URLs, for adapters that hand it to their CLI. */
  protocol: string;
  /** The platform skill and the agent's desired company skills, for CLIs that take skills. */
  skills: RunSkill[];
}

/** The program an adapter starts when adapterConfig.command is not set; the others need a command. */
const DEFAULT_COMMANDS: Partial<Record<AgentRow["adapterType"], string>> = {
  claude_local: "claude",
  codex_local: "codex",
  gemini_local: "gemini",
  opencode_local: "opencode",
};

/**
 * Why the agent's runs cannot start for want of a command (its adapter starts only what
 * adapterConfig.command names, and it names nothing), or null: the run's failure reason, and the
 * agent page's warning before any run fails.
 */
export function missingCommand(agent: Pick<AgentRow, "adapterType" | "adapterConfig">): string | null {
  if (text(agent.adapterConfig.command) || DEFAULT_COMMANDS[agent.adapterType]) return null;
  return (
    `adapterConfig.command is not set: a ${agent.adapterType} agent runs the program it names, so ` +
    "set it on the agent (with adapterConfig.args for its arguments), or pick an adapter that " +
    "starts its own CLI (claude_local, codex_local, gemini_local, opencode_local)"
  );
}

interface RunContext {
  run: HeartbeatRunRow;
  apiUrl: string;
  linkedIssueIds: string[];
}

const DEFAULT_PROMPT =
  "You are {{agentName}} ({{agentRole}}). Wake reason: {{wakeReason}}. Task: {{taskId}}. " +
  "Follow the heartbeat protocol: GET $PLATFORM_API_URL/agents/me, your inbox, checkout, heartbeat-context, " +
  "then PATCH the issue with a comment. $PLATFORM_API_URL is the API's base URL (it ends in /api); " +
  "authenticate with Authorization: Bearer $PLATFORM_API_KEY.";

const text = (value: unknown): string | null =>
  typeof value === "string" && value.length > 0 ? value : null;

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

/** `{{name}}` placeholders of the prompt template; unknown names render empty. */
function renderPrompt(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => values[name] ?? "");
}

/** The PLATFORM_* values every run gets (the run-scoped key is added when it is minted). */
function platformEnv(agent: AgentRow, { run, apiUrl, linkedIssueIds }: RunContext): Record<string, string> {
  return {
    PLATFORM_API_URL: apiUrl,
    PLATFORM_RUN_ID: run.id,
    PLATFORM_AGENT_ID: agent.id,
    PLATFORM_COMPANY_ID: agent.companyId,
    PLATFORM_TASK_ID: run.issueId ?? "",
    PLATFORM_WAKE_REASON: run.wakeReason,
    PLATFORM_WAKE_COMMENT_ID: run.commentId ?? "",
    PLATFORM_APPROVAL_ID: run.approvalId ?? "",
    PLATFORM_APPROVAL_STATUS: run.approvalStatus ?? "",
    PLATFORM_LINKED_ISSUE_IDS: linkedIssueIds.join(","),
  };
}

/**
 * The process for one run: command and args from adapterConfig, cwd, the rendered prompt (stdin),
 * the timeout, and the environment: adapterConfig.env (secret references resolved) under the
 * PLATFORM_* values, which always win. Throws when the configuration cannot run (no command, an
 * unknown secret); the caller fails the run with that message.
 */
export async function runEnvironment(
  env: Env,
  db: Db,
  agent: AgentRow,
  context: RunContext,
): Promise<PreparedRun> {
  const config = agent.adapterConfig;
  const command = text(config.command) ?? DEFAULT_COMMANDS[agent.adapterType];
  if (!command) throw new Error(missingCommand(agent) ?? "adapterConfig.command is not set");
  const { env: _env, promptTemplate: _template, ...adapterConfig } = config;
  const platform = platformEnv(agent, context);
  const instructions = text(config.instructionsFilePath);
  const model = text(config.model);
  const configured = await resolveSecretEnv(env, db, agent.companyId, config.env);
  const prompt = renderPrompt(text(config.promptTemplate) ?? DEFAULT_PROMPT, {
    agentName: agent.name,
    agentRole: agent.role,
    agentId: agent.id,
    runId: context.run.id,
    taskId: context.run.issueId ?? "",
    wakeReason: context.run.wakeReason,
    commentId: context.run.commentId ?? "",
    model: model ?? "",
  });
  const timeout = config.timeoutSec;
  return {
    command,
    args: stringList(config.args),
    cwd: text(config.cwd),
    prompt,
    timeoutSec: typeof timeout === "number" && Number.isInteger(timeout) && timeout > 0 ? timeout : null,
    env: {
      ...configured,
      ...(model ? { PLATFORM_MODEL: model } : {}),
      ...(instructions ? { PLATFORM_INSTRUCTIONS_FILE: instructions } : {}),
      ...platform,
    },
    adapterConfig,
    protocol: protocolText(context.apiUrl, agent.adapterType),
    skills: await runSkills(db, agent, context.apiUrl),
  };
}

/** What an agent needs to know of the platform: its run environment and the heartbeat protocol. */
function protocolText(apiUrl: string, adapterType: string): string {
  return `Your environment:\n${platformEnvText()}\n\n${heartbeatProtocolText(apiUrl, { adapterType })}\n\nThe ${PLATFORM_SKILL_SLUG} skill has the rest of the API: comments, hand-offs, new issues, questions, approvals.\n`;
}
