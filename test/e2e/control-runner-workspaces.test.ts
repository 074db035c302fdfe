// Runner workspaces end to end: a project whose workspace is a git repository, an issue of it, a
// mentioned process agent run by a real runner process. The run works in the issue's own worktree on
// branch switchboard/<identifier>, not in the main checkout; when the board sets the issue done the
// runner removes the worktree (told by the edge) and the branch stays. (npm start's runner is off.)
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { type RunnerProcess, startRunnerProcess } from "../support/runner-process.ts";
import { type Stack, startStack } from "../support/stack.ts";

interface Run {
  id: string;
  status: string;
  issueId: string | null;
  logExcerpt?: string | null;
}

let stack: Stack;
let board: ApiClient;
let runner: RunnerProcess;
let companyId: string;
let repo: string;

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      PATH: process.env.PATH ?? "",
      HOME: path.dirname(repo),
      GIT_AUTHOR_NAME: "Test",
      GIT_AUTHOR_EMAIL: "test@example.com",
      GIT_COMMITTER_NAME: "Test",
      GIT_COMMITTER_EMAIL: "test@example.com",
    },
  }).trim();

beforeAll(async () => {
  repo = path.join(realpathSync(mkdtempSync(path.join(tmpdir(), "workspaces-e2e-"))), "project");
  git(path.dirname(repo), "init", "-q", "-b", "main", repo);
  writeFileSync(path.join(repo, "README.md"), "hello\n");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "first");

  stack = await startStack({ env: { BRIDGE: "0", RUNNER: "0" } });
  board = await adminClient(stack.baseUrl);
  const company = await board.call<{ id: string }>("POST", "/api/companies", {
    name: `Workspaces ${Math.random().toString(36).slice(2, 8)}`,
  });
  expect(company.status).toBe(201);
  companyId = company.body.id;
  const registered = await board.call<{ token: string }>("POST", `/api/companies/${companyId}/runners`, {
    name: "workspaces runner",
  });
  expect(registered.status).toBe(201);
  runner = startRunnerProcess(stack.baseUrl, registered.body.token);
});

afterAll(async () => {
  await runner?.kill("SIGTERM");
  await stack?.stop();
  if (repo) rmSync(path.dirname(repo), { recursive: true, force: true });
});

const AGENT_SCRIPT = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "fixtures",
  "heartbeat-agent.mjs",
);
/** Prints where the agent works and on which branch, then runs the rest of its arguments. */
const SHOW_WORKSPACE = 'pwd && git rev-parse --abbrev-ref HEAD && exec "$@"';

async function projectOnRepo(): Promise<string> {
  const project = await board.call<{ id: string }>("POST", `/api/companies/${companyId}/projects`, {
    name: `Website ${Math.random().toString(36).slice(2, 6)}`,
    workspace: { cwd: repo },
  });
  expect(project.status, JSON.stringify(project.body)).toBe(201);
  return project.body.id;
}

async function processAgent(name: string, then: string[]): Promise<{ id: string; name: string }> {
  const agent = await board.call<{ id: string; name: string }>("POST", `/api/companies/${companyId}/agents`, {
    name: `${name} ${Math.random().toString(36).slice(2, 6)}`,
    role: "engineer",
    adapterType: "coder_local",
    adapterConfig: { command: "/bin/sh", args: ["-c", SHOW_WORKSPACE, "sh", ...then], timeoutSec: 60 },
  });
  expect(agent.status, JSON.stringify(agent.body)).toBe(201);
  return agent.body;
}

/** An issue of the project that mentions the agent; its first run's log once it ended. */
async function runOnIssue(projectId: string, agent: { id: string; name: string }) {
  const issue = await board.call<{ id: string; identifier: string }>(
    "POST",
    `/api/companies/${companyId}/issues`,
    {
      title: "Change the README",
      status: "todo",
      projectId,
    },
  );
  expect(issue.status).toBe(201);
  await board.call("POST", `/api/issues/${issue.body.id}/comments`, { body: `@${agent.name} go` });
  const run = await eventually(
    async () => {
      const runs = await board.call<Run[]>(
        "GET",
        `/api/companies/${companyId}/heartbeat-runs?agentId=${agent.id}`,
      );
      return runs.body.find(
        (r) => r.issueId === issue.body.id && (r.status === "succeeded" || r.status === "failed"),
      );
    },
    60_000,
    "the run to end",
  );
  const detail = await board.call<Run>("GET", `/api/heartbeat-runs/${run.id}`);
  const log = detail.body.logExcerpt ?? "";
  expect(detail.body.status, log).toBe("succeeded");
  const lines = log.split("\n");
  const pwd =
    lines.find((line) => line.startsWith(`${path.join(runner.workDir, "worktrees")}${path.sep}`)) ?? "";
  const { id, identifier } = issue.body;
  expect(path.basename(pwd), log).toBe(identifier);
  expect(lines).toContain(`switchboard/${identifier}`);
  return { issueId: id, identifier, pwd };
}

/** The worktree is gone; its branch stays; the main checkout is on main and clean. */
async function expectRemovedKeepingBranch(pwd: string, identifier: string): Promise<void> {
  await eventually(async () => (existsSync(pwd) ? undefined : true), 30_000, "the worktree to go");
  expect(git(repo, "branch", "--list", `switchboard/${identifier}`)).toContain(`switchboard/${identifier}`);
  expect(git(repo, "worktree", "list", "--porcelain")).not.toContain(pwd);
  expect(git(repo, "rev-parse", "--abbrev-ref", "HEAD")).toBe("main");
  expect(git(repo, "status", "--porcelain")).toBe("");
}

describe("runner workspaces", () => {
  it("runs an issue in its own worktree; the agent sets it done and the worktree goes, the branch stays", async () => {
    const projectId = await projectOnRepo();
    const agent = await processAgent("Finisher", [process.execPath, AGENT_SCRIPT]);
    const { issueId, identifier, pwd } = await runOnIssue(projectId, agent);
    expect((await board.call<{ status: string }>("GET", `/api/issues/${issueId}`)).body.status).toBe("done");
    await expectRemovedKeepingBranch(pwd, identifier);
  });

  it("removes the worktree of an issue the board cancels, and only that one", async () => {
    const projectId = await projectOnRepo();
    const agent = await processAgent("Looker", ["true"]);
    const kept = await runOnIssue(projectId, agent);
    const cancelled = await runOnIssue(projectId, agent);
    expect(cancelled.pwd).not.toBe(kept.pwd);
    expect(existsSync(kept.pwd) && existsSync(cancelled.pwd)).toBe(true);

    const cancel = await board.call("PATCH", `/api/issues/${cancelled.issueId}`, { status: "cancelled" });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    await expectRemovedKeepingBranch(cancelled.pwd, cancelled.identifier);
    expect(existsSync(path.join(kept.pwd, "README.md"))).toBe(true);
  });
});
