// How an agent's adapterType and adapterConfig reach the runner: a claude_local agent's run carries
// its type, the CLI to start (claude unless configured), the adapter's own options (never env, whose
// secrets are resolved into the environment, nor the prompt template) and the platform protocol with
// this edge's URLs, and the skills its CLI gets (the platform's, then the agent's desired ones); a
// process agent still needs its command.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { SKILL_CONTENT_MAX_CHARS } from "../../../../bridge/src/protocol/runner";
import { BASE, call } from "../../helpers";
import { eventually } from "../../patience";
import { type BoardUser, boardUser, seedCompany, seedIssue } from "../helpers";
import { claimOne, runnerFor, sayHello } from "../runner-link";

type Json = Record<string, unknown>;

beforeEach(async () => {
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
});

async function hire(board: BoardUser, companyId: string, body: Json): Promise<{ id: string; name: string }> {
  const created = await call<{ id: string; name: string }>("POST", `/api/companies/${companyId}/agents`, {
    headers: board.headers,
    body: { role: "engineer", ...body },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

async function mention(board: BoardUser, issueId: string, name: string): Promise<void> {
  const res = await call("POST", `/api/issues/${issueId}/comments`, {
    headers: board.headers,
    body: { body: `@${name} please` },
  });
  expect(res.status).toBe(201);
}

describe("adapter types on the runner link", () => {
  it("a claude_local run carries its type, `claude`, the adapter's options and the protocol", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await hire(board, company.id, {
      name: "Claudia",
      adapterType: "claude_local",
      adapterConfig: {
        model: "sonnet",
        maxTurns: 12,
        permissionMode: "acceptEdits",
        promptTemplate: "Wake: {{wakeReason}}",
        env: { GIT_AUTHOR_NAME: "Claudia" },
      },
    });
    const issue = await seedIssue(company, { status: "todo" });
    await mention(board, issue.id, agent.name);
    const run = (await claimOne(await runnerFor(board, company.id))) as unknown as Json & {
      env: Record<string, string>;
    };
    expect(run).toMatchObject({
      adapterType: "claude_local",
      command: "claude",
      prompt: "Wake: issue_comment_mentioned",
      adapterConfig: { model: "sonnet", maxTurns: 12, permissionMode: "acceptEdits" },
    });
    expect(run.adapterConfig).not.toHaveProperty("env");
    expect(run.adapterConfig).not.toHaveProperty("promptTemplate");
    expect(run.env.GIT_AUTHOR_NAME).toBe("Claudia");
    expect(run.protocol).toContain(`GET ${BASE}/api/agents/me`);
    expect(run.protocol).toContain("PLATFORM_API_KEY");
  });

  it("a run carries the platform skill first, then the agent's desired skills in its order, each bounded", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const long = "x".repeat(SKILL_CONTENT_MAX_CHARS + 5_000);
    const imported = await call("POST", `/api/companies/${company.id}/skills/import`, {
      headers: board.headers,
      body: {
        skills: [
          { name: "Release notes", description: "How we write them", content: "One line per change." },
          { name: "Long manual", content: long },
          { name: "Unwanted", content: "Not for this agent." },
        ],
      },
    });
    expect(imported.status).toBe(201);
    const agent = await hire(board, company.id, { name: "Skilly", adapterType: "claude_local" });
    const synced = await call("POST", `/api/agents/${agent.id}/skills/sync`, {
      headers: board.headers,
      body: { desiredSkills: ["long-manual", "release-notes"] },
    });
    expect(synced.status).toBe(200);
    const issue = await seedIssue(company, { status: "todo" });
    await mention(board, issue.id, agent.name);
    const run = await claimOne(await runnerFor(board, company.id));
    const skills = run.skills ?? [];
    expect(skills.map((skill) => skill.key)).toEqual([
      "platform/switchboard",
      "company/long-manual",
      "company/release-notes",
    ]);
    const [platform, manual, notes] = skills;
    expect(platform?.content).toContain(`POST ${BASE}/api/issues/{issueId}/checkout`);
    expect(platform?.content).toContain(`POST ${BASE}/api/companies/{companyId}/approvals`);
    expect(manual?.content.length).toBeLessThanOrEqual(SKILL_CONTENT_MAX_CHARS);
    expect(manual?.content).toContain(`whole skill is ${long.length} characters`);
    // No description: the name stands in, as the CLIs need one to list the skill.
    expect(manual?.description).toBe("Long manual");
    expect(notes).toEqual({
      key: "company/release-notes",
      slug: "release-notes",
      name: "Release notes",
      description: "How we write them",
      content: "One line per change.",
    });
  });

  it("an opencode_local run carries its type, `opencode`, its <provider>/<model> and options", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await hire(board, company.id, {
      name: "Opal",
      adapterType: "opencode_local",
      adapterConfig: {
        model: "anthropic/claude-sonnet-4-5",
        autoApprove: true,
        provider: { baseUrl: "https://gateway.example/v1" },
        env: { GIT_AUTHOR_NAME: "Opal" },
      },
    });
    const issue = await seedIssue(company, { status: "todo" });
    await mention(board, issue.id, agent.name);
    const run = (await claimOne(await runnerFor(board, company.id))) as unknown as Json & {
      env: Record<string, string>;
    };
    expect(run).toMatchObject({
      adapterType: "opencode_local",
      command: "opencode",
      adapterConfig: {
        model: "anthropic/claude-sonnet-4-5",
        autoApprove: true,
        provider: { baseUrl: "https://gateway.example/v1" },
      },
    });
    expect(run.adapterConfig).not.toHaveProperty("env");
    expect(run.env.GIT_AUTHOR_NAME).toBe("Opal");
    expect(run.protocol).toContain(`GET ${BASE}/api/agents/me`);
  });

  it("a process agent without a command fails at claim with the reason; the models route knows the types", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await hire(board, company.id, { name: "Bare", adapterType: "process", adapterConfig: {} });
    const invoked = await call<Json>("POST", `/api/agents/${agent.id}/heartbeat/invoke`, {
      headers: board.headers,
    });
    const link = await runnerFor(board, company.id);
    link.send({ type: "claim", slots: 1 });
    const runId = String(invoked.body.id);
    await eventually(async () => {
      const row = await env.DB.prepare("SELECT status, error_reason FROM heartbeat_runs WHERE id = ?")
        .bind(runId)
        .first<Json>();
      return (
        row?.status === "failed" &&
        row.error_reason ===
          "configuration: adapterConfig.command is not set: a process agent runs the program it names, so " +
            "set it on the agent (with adapterConfig.args for its arguments), or pick an adapter that " +
            "starts its own CLI (claude_local, codex_local, gemini_local, opencode_local)"
      );
    });
    const models = await call<Json[]>("GET", `/api/companies/${company.id}/adapters/claude_local/models`, {
      headers: board.headers,
    });
    expect(models.status).toBe(200);
    expect(models.body.map((model) => model.id)).toContain("sonnet");
    const codex = await call<Json[]>("GET", `/api/companies/${company.id}/adapters/codex_local/models`, {
      headers: board.headers,
    });
    // What Codex 0.169 runs without --model, first in its own list.
    expect(codex.body[0]).toMatchObject({ id: "gpt-6.1-sol", default: true });
    expect(codex.body.map((model) => model.id)).not.toContain("gpt-5-codex");
    const gemini = await call<Json[]>("GET", `/api/companies/${company.id}/adapters/gemini_local/models`, {
      headers: board.headers,
    });
    expect(gemini.body[0]).toMatchObject({ id: "gemini-2.5-pro", default: true });
    const opencode = await call<Json[]>(
      "GET",
      `/api/companies/${company.id}/adapters/opencode_local/models`,
      { headers: board.headers },
    );
    expect(opencode.status).toBe(200);
    expect(opencode.body[0]).toMatchObject({ id: "anthropic/claude-sonnet-5", default: true });
    expect(opencode.body.every((model) => /^[a-z]+\/\S+$/.test(String(model.id)))).toBe(true);
    const none = await call<Json[]>("GET", `/api/companies/${company.id}/adapters/process/models`, {
      headers: board.headers,
    });
    expect(none.body).toEqual([]);
  });

  it("the models route offers what the company's connected runners' CLIs listed, else the catalogue", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const otherBoard = await boardUser();
    const other = await seedCompany(otherBoard);
    const models = (companyId: string, headers: Record<string, string>) =>
      call<Json[]>("GET", `/api/companies/${companyId}/adapters/codex_local/models`, { headers });
    const link = await runnerFor(board, company.id);
    sayHello(link, [
      {
        adapterType: "codex_local",
        command: "codex",
        version: "codex-cli 0.169.0",
        models: ["gpt-6-astra", "my-finetune", "gpt-6.1-sol"],
      },
      { adapterType: "claude_local", command: "claude", version: null },
    ]);
    await eventually(async () => (await models(company.id, board.headers)).body.length === 3);
    // The catalogue's default first when a runner has it; labels from the catalogue where it knows them.
    expect((await models(company.id, board.headers)).body).toEqual([
      { id: "gpt-6.1-sol", label: "GPT-6.1-Sol", default: true },
      { id: "gpt-6-astra", label: "GPT-6-Astra" },
      { id: "my-finetune", label: "my-finetune" },
    ]);
    // A CLI that listed nothing, and another company (not served by this runner): the catalogue.
    const claude = await call<Json[]>("GET", `/api/companies/${company.id}/adapters/claude_local/models`, {
      headers: board.headers,
    });
    expect(claude.body[0]).toMatchObject({ id: "sonnet", default: true });
    const elsewhere = await models(other.id, otherBoard.headers);
    expect(elsewhere.body.map((model) => model.id)).not.toContain("my-finetune");
    expect(elsewhere.body[0]).toMatchObject({ id: "gpt-6.1-sol", default: true });
    expect((await models(other.id, board.headers)).status).toBe(404);
    link.socket.close(1000, "done");
    await eventually(async () => (await models(company.id, board.headers)).body.length > 3);
    expect((await models(company.id, board.headers)).body[0]).toMatchObject({
      id: "gpt-6.1-sol",
      default: true,
    });
  });
});
