// The /llms guidance texts: authenticated (agent key or board credentials), plain text, and useful.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { agentCredentialsChanged } from "../../../workers/auth/agent-key-store";
import { seedTenant } from "../control/helpers";
import { call } from "../helpers";

const PLATFORM_VARIABLES = [
  "PLATFORM_API_URL",
  "PLATFORM_API_KEY",
  "PLATFORM_RUN_ID",
  "PLATFORM_AGENT_ID",
  "PLATFORM_COMPANY_ID",
  "PLATFORM_TASK_ID",
  "PLATFORM_WAKE_REASON",
  "PLATFORM_WAKE_COMMENT_ID",
  "PLATFORM_APPROVAL_ID",
  "PLATFORM_APPROVAL_STATUS",
  "PLATFORM_LINKED_ISSUE_IDS",
];

async function getText(path: string, headers: Record<string, string> = {}) {
  const res = await call<string>("GET", path, { headers });
  return {
    status: res.status,
    type: res.headers.get("content-type"),
    text: String(res.body),
    body: res.body,
  };
}

describe("/llms guidance", () => {
  it("agent-configuration.txt covers adapters, config fields, secrets, heartbeat and the run environment", async () => {
    const { agent } = await seedTenant();
    const res = await getText("/llms/agent-configuration.txt", agent.headers);
    expect(res.status).toBe(200);
    expect(res.type).toBe("text/plain; charset=utf-8");
    for (const phrase of [
      "coder_local",
      "assistant_local",
      "command",
      "args",
      "cwd",
      "model",
      "promptTemplate",
      "instructionsFilePath",
      '"type": "secret_ref"',
      "runtimeConfig.heartbeat",
      "intervalSec",
      "wakeOnDemand",
      "http://switchboard.test/api/agents/me",
      "/checkout",
      "/heartbeat-context",
      "PATCH http://switchboard.test/api/issues/{issueId}",
      "prioritise",
      "POST http://switchboard.test/api/issues/{issueId}/questions",
      "http://switchboard.test/llms/agent-configuration/coder_local.txt",
      ...PLATFORM_VARIABLES,
    ])
      expect(res.text, phrase).toContain(phrase);
  });

  it("serves one guide per adapter type with its models, and 404 for unknown types", async () => {
    const { board } = await seedTenant();
    const coder = await getText("/llms/agent-configuration/coder_local.txt", board.headers);
    expect(coder.status).toBe(200);
    expect(coder.type).toBe("text/plain; charset=utf-8");
    expect(coder.text).toContain("Adapter coder_local");
    expect(coder.text).toContain("claude-sonnet-4-5");
    expect(coder.text).toContain("(default)");
    expect(coder.text).toContain("PLATFORM_LINKED_ISSUE_IDS");
    const assistant = await getText("/llms/agent-configuration/assistant_local.txt", board.headers);
    expect(assistant.status).toBe(200);
    expect(assistant.text).toContain("gpt-5");
    const opencode = await getText("/llms/agent-configuration/opencode_local.txt", board.headers);
    expect(opencode.status).toBe(200);
    expect(opencode.text).toContain("opencode run --format json");
    expect(opencode.text).toContain("anthropic/claude-sonnet-5 Claude Sonnet 5 (Anthropic) (default)");
    expect(opencode.text).toContain("autoApprove");
    expect(opencode.text).toContain("Skills: every run hands the CLI the platform's own skill");
    expect(coder.text).not.toContain("Skills: every run");
    for (const path of [
      "/llms/agent-configuration/unknown_adapter.txt",
      "/llms/agent-configuration/coder_local",
      "/llms/agent-configuration/coder_local.md",
    ]) {
      const res = await call<{ error: string }>("GET", path, { headers: board.headers });
      expect(res.status, path).toBe(404);
      expect(res.body.error).toBeTruthy();
    }
  });

  it("agent-icons.txt lists icon names", async () => {
    const { agent } = await seedTenant();
    const res = await getText("/llms/agent-icons.txt", agent.headers);
    expect(res.status).toBe(200);
    expect(res.type).toBe("text/plain; charset=utf-8");
    for (const icon of ["crown", "code", "bug", "bot"])
      expect(res.text).toMatch(new RegExp(`^ {2}${icon}\\s`, "m"));
  });

  it("needs credentials: none, a bad key or a revoked agent key answer 401 in the control envelope", async () => {
    const { agent } = await seedTenant();
    const attempts: Array<Record<string, string>> = [
      {},
      { Authorization: "Bearer swa_not_a_key" },
      { "X-API-Key": "nope" },
    ];
    for (const headers of attempts) {
      const res = await call<{ error: string }>("GET", "/llms/agent-icons.txt", { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(typeof res.body.error).toBe("string");
    }
    await env.DB.prepare("UPDATE agent_api_keys SET revoked_at = ? WHERE agent_id = ?")
      .bind(Date.now(), agent.id)
      .run();
    await agentCredentialsChanged(env, agent.id);
    const revoked = await call("GET", "/llms/agent-configuration.txt", { headers: agent.headers });
    expect(revoked.status).toBe(401);
  });
});
