// Where a run works and when a runner's worktrees may go, in workerd: a run on an issue of a project
// works in the project's primary workspace (over adapterConfig.cwd) and names its issue; a runner asking
// about the issues it holds worktrees for hears which are done, cancelled or unknown, never whether
// another company's issue exists; setting an issue done or cancelled tells connected runners to ask.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { type BoardUser, boardUser, type SeededCompany, seedAgent, seedCompany, seedIssue } from "../helpers";
import { claimOne, runnerFor } from "../runner-link";

beforeEach(async () => {
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
});

async function projectWithWorkspace(board: BoardUser, company: SeededCompany, cwd: string): Promise<string> {
  const res = await call<{ id: string }>("POST", `/api/companies/${company.id}/projects`, {
    headers: board.headers,
    body: { name: `Project ${cwd}`, workspace: { cwd } },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

const putInProject = (issueId: string, projectId: string) =>
  env.DB.prepare("UPDATE issues SET project_id = ? WHERE id = ?").bind(projectId, issueId).run();

async function mention(board: BoardUser, issueId: string, agentName: string): Promise<void> {
  const res = await call("POST", `/api/issues/${issueId}/comments`, {
    headers: board.headers,
    body: { body: `@${agentName} look` },
  });
  expect(res.status).toBe(201);
}

describe("run workspaces", () => {
  it("a run on a project's issue works in the project's workspace and names its issue; others keep the agent's cwd", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    await seedAgent(company.id, { name: "Dev", adapterConfig: { command: "node", cwd: "/agent/own" } });
    const projectId = await projectWithWorkspace(board, company, "/repos/website");
    const inProject = await seedIssue(company, { status: "todo" });
    await putInProject(inProject.id, projectId);
    const loose = await seedIssue(company, { status: "todo" });
    const link = await runnerFor(board, company.id);

    await mention(board, inProject.id, "Dev");
    expect(await claimOne(link)).toMatchObject({
      cwd: "/repos/website",
      issue: { id: inProject.id, identifier: inProject.identifier },
    });
    await env.DB.prepare("UPDATE heartbeat_runs SET status = 'succeeded' WHERE status = 'running'").run();
    await mention(board, loose.id, "Dev");
    expect(await claimOne(link)).toMatchObject({
      cwd: "/agent/own",
      issue: { id: loose.id, identifier: loose.identifier },
    });
  });

  it("takes workspaceStrategy shared or worktree in adapterConfig, refuses anything else, and hands it to the runner", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id, { name: "Reviewer", adapterConfig: { command: "node" } });
    const configure = (workspaceStrategy: string) =>
      call("PATCH", `/api/agents/${agent.id}`, {
        headers: board.headers,
        body: { adapterConfig: { command: "node", workspaceStrategy } },
      });
    const refused = await configure("sideways");
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("workspaceStrategy");
    const stored = await env.DB.prepare("SELECT adapter_config FROM agents WHERE id = ?")
      .bind(agent.id)
      .first<{ adapter_config: string }>();
    expect(JSON.parse(stored?.adapter_config ?? "{}")).toEqual({ command: "node" });
    expect((await configure("shared")).status).toBe(200);

    const issue = await seedIssue(company, { status: "todo" });
    const link = await runnerFor(board, company.id);
    await mention(board, issue.id, "Reviewer");
    expect((await claimOne(link)).adapterConfig).toEqual({ command: "node", workspaceStrategy: "shared" });
  });

  it("answers which held issues are closed: done, cancelled, unknown or another company's, never open ones", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const open = await seedIssue(company, { status: "in_progress" });
    const done = await seedIssue(company, { status: "done" });
    const cancelled = await seedIssue(company, { status: "cancelled" });
    const outsider = await boardUser();
    const foreign = await seedIssue(await seedCompany(outsider), { status: "todo" });
    const link = await runnerFor(board, company.id);

    const asked = [open.id, done.id, cancelled.id, foreign.id, crypto.randomUUID()];
    link.send({ type: "workspaces", issueIds: asked });
    const answer = await link.next((frame) => frame.type === "closed-issues");
    expect(answer.issueIds).toEqual(asked.slice(1));
  });

  it("tells connected runners to check their worktrees when the board sets an issue cancelled", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const issue = await seedIssue(company, { status: "todo" });
    const link = await runnerFor(board, company.id);

    const retitled = await call("PATCH", `/api/issues/${issue.id}`, {
      headers: board.headers,
      body: { title: "Renamed" },
    });
    expect(retitled.status).toBe(200);
    const cancelled = await call("PATCH", `/api/issues/${issue.id}`, {
      headers: board.headers,
      body: { status: "cancelled" },
    });
    expect(cancelled.status).toBe(200);
    await link.next((frame) => frame.type === "check-workspaces");
    // One hint, for the closing update only.
    expect(link.frames.filter((frame) => frame.type === "check-workspaces")).toHaveLength(1);
  });
});
