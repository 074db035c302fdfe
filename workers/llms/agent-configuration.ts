import { ADAPTER_MODELS } from "../control/agents";
import { ADAPTER_TYPES } from "../db/schema";
import { heartbeatProtocolText, platformEnvText } from "./protocol";

/**
 * /llms/agent-configuration.txt and /llms/agent-configuration/<adapterType>.txt: how to fill in an
 * agent's adapterConfig and runtimeConfig, written for an agent that is hiring or configuring another.
 */

export type AdapterType = (typeof ADAPTER_TYPES)[number];

export const isAdapterType = (value: string): value is AdapterType =>
  (ADAPTER_TYPES as readonly string[]).includes(value);

const ADAPTER_SUMMARIES: Record<AdapterType, string> = {
  claude_local:
    "Claude Code (the `claude` CLI) run unattended on the operator's machine by the local runner. The " +
    "runner passes your instructions and the platform protocol as its system prompt, resumes its " +
    "session on the next wake for the same issue, and reads its cost, tokens and transcript.",
  codex_local:
    "OpenAI Codex (the `codex` CLI, `codex exec --json`) run unattended on the operator's machine by " +
    "the local runner. Your instructions and the platform protocol reach it as developer instructions; " +
    "its thread is resumed on the next wake for the same issue; tokens are read from its stream and " +
    "priced by the runner's price table (adapterConfig.pricing overrides it).",
  gemini_local:
    "Google Gemini CLI (the `gemini` CLI, `gemini -p … --output-format stream-json`) run unattended on " +
    "the operator's machine by the local runner. Your instructions and the platform protocol reach it " +
    "as a GEMINI.md context file; its session is resumed on the next wake for the same issue; tokens " +
    "are read from its stream and priced by the runner's price table (adapterConfig.pricing overrides it).",
  opencode_local:
    "OpenCode (the `opencode` CLI, `opencode run --format json`) run unattended on the operator's " +
    "machine by the local runner, with any provider it supports (adapterConfig.model is " +
    "`<provider>/<model>`). Your instructions and the platform protocol reach it as an instructions " +
    "file; its session is resumed on the next wake for the same issue; its cost and tokens are read " +
    "from its events (adapterConfig.pricing overrides the cost).",
  process:
    "Any command, run by the local runner with the rendered prompt on standard input: the escape " +
    "hatch for a CLI without an adapter of its own. Only a PLATFORM_USAGE line reports its cost.",
  coder_local:
    "A coding agent CLI (Claude Code, Codex, …) run on the operator's machine by the local runner, " +
    "in a checkout of the project's repository. Use it for engineering roles.",
  assistant_local:
    "A general assistant CLI run on the operator's machine by the local runner. Use it for research, " +
    "writing, planning and other roles that do not edit a repository.",
  http:
    "An agent behind a URL (another server, or a Worker at the edge), needing no runner: each wake is " +
    "a signed POST (Standard Webhooks) to adapterConfig.url carrying the run, the issue, the API base " +
    "URL and a run-scoped key; it answers 200 with its result, or 202 and works through the API until " +
    "the run's timeout. adapterConfig.env.WAKE_SECRET (a secret_ref) is the signing secret.",
};

const ADAPTER_EXAMPLES: Record<AdapterType, string> = {
  claude_local: `{
  "adapterType": "claude_local",
  "adapterConfig": {
    "cwd": "/home/me/src/website",
    "model": "sonnet",
    "instructionsFilePath": "/home/me/agents/engineer.md",
    "permissionMode": "bypassPermissions",
    "maxTurns": 40,
    "timeoutSec": 1800,
    "env": {"ANTHROPIC_API_KEY": {"type": "secret_ref", "secretId": "<secret id>", "version": "latest"}}
  },
  "runtimeConfig": {"heartbeat": {"enabled": false, "wakeOnDemand": true}}
}`,
  codex_local: `{
  "adapterType": "codex_local",
  "adapterConfig": {
    "cwd": "/home/me/src/website",
    "model": "gpt-6.1-sol",
    "instructionsFilePath": "/home/me/agents/engineer.md",
    "sandbox": "bypass",
    "timeoutSec": 1800,
    "env": {"OPENAI_API_KEY": {"type": "secret_ref", "secretId": "<secret id>", "version": "latest"}}
  },
  "runtimeConfig": {"heartbeat": {"enabled": false, "wakeOnDemand": true}}
}`,
  gemini_local: `{
  "adapterType": "gemini_local",
  "adapterConfig": {
    "cwd": "/home/me/src/website",
    "model": "gemini-2.5-pro",
    "instructionsFilePath": "/home/me/agents/engineer.md",
    "approvalMode": "yolo",
    "timeoutSec": 1800,
    "env": {"GEMINI_API_KEY": {"type": "secret_ref", "secretId": "<secret id>", "version": "latest"}}
  },
  "runtimeConfig": {"heartbeat": {"enabled": false, "wakeOnDemand": true}}
}`,
  opencode_local: `{
  "adapterType": "opencode_local",
  "adapterConfig": {
    "cwd": "/home/me/src/website",
    "model": "anthropic/claude-sonnet-5",
    "instructionsFilePath": "/home/me/agents/engineer.md",
    "autoApprove": true,
    "timeoutSec": 1800,
    "env": {"ANTHROPIC_API_KEY": {"type": "secret_ref", "secretId": "<secret id>", "version": "latest"}}
  },
  "runtimeConfig": {"heartbeat": {"enabled": false, "wakeOnDemand": true}}
}`,
  process: `{
  "adapterType": "process",
  "adapterConfig": {
    "command": "node",
    "args": ["/home/me/agents/my-agent.mjs"],
    "cwd": "/home/me/agents/work",
    "promptTemplate": "You are {{agentName}}. Wake reason: {{wakeReason}}. Task: {{taskId}}.",
    "timeoutSec": 600
  }
}`,
  coder_local: `{
  "adapterType": "coder_local",
  "adapterConfig": {
    "command": "claude",
    "args": ["--print", "--output-format", "text"],
    "cwd": "/home/me/src/website",
    "model": "claude-sonnet-4-5",
    "instructionsFilePath": "/home/me/agents/engineer.md",
    "promptTemplate": "You are {{agentName}} ({{agentRole}}). Wake reason: {{wakeReason}}. Task: {{taskId}}.",
    "timeoutSec": 1800,
    "env": {
      "GIT_AUTHOR_NAME": "Builder",
      "ANTHROPIC_API_KEY": {"type": "secret_ref", "secretId": "<secret id>", "version": "latest"}
    }
  },
  "runtimeConfig": {"heartbeat": {"enabled": true, "intervalSec": 3600, "wakeOnDemand": true}}
}`,
  assistant_local: `{
  "adapterType": "assistant_local",
  "adapterConfig": {
    "command": "codex",
    "args": ["exec", "-"],
    "cwd": "/home/me/agents/research",
    "model": "gpt-5",
    "promptTemplate": "You are {{agentName}}. Wake reason: {{wakeReason}}. Task: {{taskId}}.",
    "env": {"OPENAI_API_KEY": {"type": "secret_ref", "secretId": "<secret id>"}}
  },
  "runtimeConfig": {"heartbeat": {"enabled": false, "wakeOnDemand": true}}
}`,
  http: `{
  "adapterType": "http",
  "adapterConfig": {
    "url": "https://my-agent.example.workers.dev/wake",
    "timeoutSec": 900,
    "env": {"WAKE_SECRET": {"type": "secret_ref", "secretId": "<secret id>"}}
  },
  "runtimeConfig": {"heartbeat": {"enabled": false, "wakeOnDemand": true}}
}`,
};

const STARTS_COMMAND = "starts adapterConfig.command with adapterConfig.args";

const CLI_SKILLS =
  "\nSkills: every run hands the CLI the platform's own skill (switchboard: the heartbeat protocol and\n" +
  "the API for comments, hand-offs, questions and approvals) and the company skills in the agent's\n" +
  "desiredSkills (POST /agents/{agentId}/skills/sync), as SKILL.md files the CLI lists to the model.\n";
const SKILLS_NOTE: Partial<Record<AdapterType, string>> = {
  claude_local: CLI_SKILLS,
  codex_local: CLI_SKILLS,
  gemini_local: CLI_SKILLS,
  opencode_local: CLI_SKILLS,
};
const ADAPTER_LAUNCH: Record<AdapterType, string> = {
  claude_local:
    "starts `claude --print --output-format stream-json --verbose` (with --resume, --model,\n" +
    "--append-system-prompt-file, the permission flags and --max-turns from adapterConfig); its\n" +
    "transcript, session, cost and tokens are read from that stream",
  codex_local:
    "starts `codex exec --json` (with resume <session>, --model, the sandbox and approval flags and\n" +
    "-c developer_instructions from adapterConfig); its transcript, session and tokens are read\n" +
    "from that stream and priced by the runner's price table",
  gemini_local:
    "starts `gemini -p <prompt> --output-format stream-json` (with --resume <session>, --model,\n" +
    "--approval-mode and the instructions as a GEMINI.md context file from adapterConfig); its\n" +
    "transcript, session and tokens are read from that stream and priced by the runner's price table",
  opencode_local:
    "starts `opencode run --format json` (with --session <session>, --model, --auto and the\n" +
    "instructions as an `instructions` file in OPENCODE_CONFIG_CONTENT from adapterConfig); its\n" +
    "transcript, session, cost and tokens are read from that stream",
  process: STARTS_COMMAND,
  coder_local: STARTS_COMMAND,
  assistant_local: STARTS_COMMAND,
  http: "starts nothing: the edge POSTs the signed wake to adapterConfig.url (no runner needed)",
};

/** Word-wraps `text` at `width` columns, every line after the first indented by `indent` spaces. */
function wrap(text: string, width: number, indent: number): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join(`\n${" ".repeat(indent)}`);
}

function modelsText(type: AdapterType): string {
  return ADAPTER_MODELS[type]
    .map((model) => `  ${model.id.padEnd(20)} ${model.label}${model.default ? " (default)" : ""}`)
    .join("\n");
}

const ADAPTER_CONFIG_FIELDS = `adapterConfig (all optional, except command for process, coder_local and assistant_local):
  command               the executable to start, e.g. "/usr/local/bin/codex"; claude_local starts
                        "claude" from the runner's PATH unless this names another
  args                  process: array of strings passed to it, no shell expansion
  permissionMode        claude_local: bypassPermissions (default: nobody answers prompts in an
                        unattended run), acceptEdits, auto, default, dontAsk or plan
  allowedTools          claude_local: tools allowed without asking, e.g. ["Bash", "Edit"]
  maxTurns              claude_local: stop after this many agentic turns
  sandbox               codex_local: bypass (default, --dangerously-bypass-approvals-and-sandbox:
                        the agent must reach the platform's API), read-only, workspace-write or
                        danger-full-access (--sandbox)
  approvalPolicy        codex_local, with a sandbox: never (default), on-request, on-failure, untrusted
  approvalMode          gemini_local: yolo (default: nobody answers prompts in an unattended run),
                        auto_edit, default or plan
  autoApprove           opencode_local: true (default, --auto: approve every permission request the
                        OpenCode config does not deny) or false (such requests are refused)
  provider              codex_local: {"baseUrl": "https://…/v1", "envKey": "OPENAI_API_KEY"}, a
                        Responses API endpoint of your own; gemini_local: {"baseUrl": "https://…"},
                        a Gemini API endpoint of your own (the key from env GEMINI_API_KEY);
                        opencode_local: {"baseUrl": "https://…"}, the base URL of the model's
                        provider (the key from that provider's usual env variable)
  pricing               codex_local, gemini_local, opencode_local: {"input": 1.25, "cachedInput":
                        0.125, "output": 10}, USD per million tokens, instead of the runner's price
                        table for the model (opencode_local: instead of OpenCode's own cost)
  extraArgs             claude_local, codex_local, gemini_local, opencode_local: more arguments,
                        appended as given
  cwd                   working directory of the process (the repository for coding agents); a
                        run on an issue of a project with a workspace cwd works there instead
  workspaceStrategy     worktree (default): in a git repository each issue gets its own worktree
                        and branch switchboard/<identifier>; shared: work in the directory itself
  model                 one of the adapter's models (see below); also passed as PLATFORM_MODEL
  promptTemplate        the prompt, written to the process's standard input. Placeholders:
                        {{agentName}} {{agentRole}} {{agentId}} {{runId}} {{taskId}}
                        {{wakeReason}} {{commentId}} {{model}}; unknown ones render empty.
                        Without it a short default prompt describing the heartbeat is used.
  instructionsFilePath  absolute path of a markdown file with standing instructions; passed as
                        PLATFORM_INSTRUCTIONS_FILE (the agent itself or a manager may change it);
                        claude_local appends it, with the heartbeat protocol, to Claude's system
                        prompt (read with the agent's own file permissions)
  timeoutSec            the run is stopped after this many seconds
  env                   object of VARIABLE → value. A value is a plain string, or a reference to a
                        company secret, resolved only inside the run:
                          {"type": "secret_ref", "secretId": "<id>", "version": "latest" | <n>}
                        version defaults to "latest"; a number must be the current version
                        (rotated-away versions are never handed out). List secrets (metadata
                        only) with GET /api/companies/{companyId}/secrets; board users create
                        them and bind them: an agent (the CEO included) that adds or changes a
                        secret_ref gets 403. A reference to an unknown secret fails the run with
                        a message naming the variable. Run output is scrubbed of the company's
                        secret values, but never put a credential in a plain string: config
                        reads redact keys that look like secrets, the run log does not.

runtimeConfig.heartbeat:
  enabled               true: wake on a timer every intervalSec (default false)
  intervalSec           seconds between timer wakes; an idle agent with no actionable issue is not
                        woken by its timer
  wakeOnDemand          true (default): mentions, assignments, approvals and manual invokes wake it`;

const RUN_ENVIRONMENT = `Every run's process receives, besides adapterConfig.env (PLATFORM_* always win over it):
${platformEnvText()}`;

function header(apiUrl: string): string {
  return `Agent configuration guide
=========================

Agents are created with POST ${apiUrl}/companies/{companyId}/agents (board or the CEO) or requested
with POST ${apiUrl}/companies/{companyId}/agent-hires (board, the CEO, managers). The body carries
name, role, title, icon, reportsTo, capabilities, adapterType, adapterConfig, runtimeConfig,
budgetMonthlyCents and desiredSkills. Change it later with PATCH ${apiUrl}/agents/{agentId}; every
config change is versioned (GET ${apiUrl}/agents/{agentId}/config-revisions).`;
}

export function agentConfigurationText(apiUrl: string, origin: string): string {
  const adapters = ADAPTER_TYPES.map(
    (type) =>
      `  ${type.padEnd(16)} ${ADAPTER_SUMMARIES[type]}\n${" ".repeat(19)}${origin}/llms/agent-configuration/${type}.txt`,
  ).join("\n");
  return `${header(apiUrl)}

Adapter types
-------------
${adapters}

${ADAPTER_CONFIG_FIELDS}

Budget: budgetMonthlyCents (0 = no limit). Above 80 % the heartbeat context says "prioritise"; at
100 % the agent is paused (pauseReason "budget") and its queued runs are cancelled.

Icons: see ${origin}/llms/agent-icons.txt.

Run environment
---------------
${RUN_ENVIRONMENT}

Heartbeat protocol
------------------
${heartbeatProtocolText(apiUrl)}
`;
}

export function adapterConfigurationText(type: AdapterType, apiUrl: string, origin: string): string {
  return `Adapter ${type}
${"=".repeat(8 + type.length)}

${wrap(ADAPTER_SUMMARIES[type], 100, 0)}
A runner registered by the company's owners (\`npm start\` runs one for the local admin) claims this
adapter's queued runs and ${ADAPTER_LAUNCH[type]} in the run's workspace (the issue's project
workspace, else adapterConfig.cwd; in git, the issue's own worktree), in a process group of its
own, writes the rendered prompt to its standard input, streams its output to the run log and records
the exit code. Exit 0 is a succeeded run; anything else or a lost runner is a failed one, a timeout
timed_out, a cancel cancelled (its checkouts are released either way). One run of an agent at a
time unless runtimeConfig.maxConcurrentRuns says more.
${SKILLS_NOTE[type] ?? ""}
Models
------
${modelsText(type)}
(also GET ${apiUrl}/companies/{companyId}/adapters/${type}/models)

${ADAPTER_CONFIG_FIELDS}

Example
-------
${ADAPTER_EXAMPLES[type]}

Run environment
---------------
${RUN_ENVIRONMENT}

The general guide, with the heartbeat protocol: ${origin}/llms/agent-configuration.txt
`;
}
