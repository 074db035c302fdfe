// Per-issue git worktrees, with real git in a temporary repository: an issue gets a worktree and a
// branch of its own, the same issue gets the same one (even twice at once), "shared" and a directory
// outside any repository work in place, and removal takes the worktree but keeps the branch and the
// main checkout as they were. The last test runs a real child process through AgentProcess.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentProcess } from "../../../bridge/src/runner/agent-process.ts";
import { Workspaces } from "../../../bridge/src/runner/workspace.ts";

let base: string;
let repo: string;
let root: string;

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: base, GIT_CONFIG_NOSYSTEM: "1" },
  }).trim();

const ENG_1 = { id: "issue-1", identifier: "ENG-1" };
const ENG_2 = { id: "issue-2", identifier: "ENG-2" };

beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(tmpdir(), "workspace-test-")));
  repo = path.join(base, "project");
  root = path.join(base, "runner", "worktrees");
  mkdirSync(path.join(repo, "src"), { recursive: true });
  writeFileSync(path.join(base, ".gitconfig"), "[user]\n\tname = Test\n\temail = test@example.com\n");
  git(base, "init", "-q", "-b", "main", repo);
  writeFileSync(path.join(repo, "README.md"), "hello\n");
  writeFileSync(path.join(repo, "src", "index.ts"), "export {};\n");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "first");
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const enter = (workspaces: Workspaces, issue = ENG_1, cwd = repo) =>
  workspaces.enter({ cwd, issue, strategy: "worktree" });

/** The main checkout is on main, at its first commit, with nothing changed or untracked. */
function expectMainCheckoutUntouched(): void {
  expect(git(repo, "rev-parse", "--abbrev-ref", "HEAD")).toBe("main");
  expect(git(repo, "status", "--porcelain", "--untracked-files=all")).toBe("");
  expect(git(repo, "log", "--format=%s")).toBe("first");
}

describe("runner workspaces", () => {
  it("gives two issues two worktrees on two branches from HEAD, outside the main checkout", async () => {
    const workspaces = new Workspaces(root, null);
    const [one, two] = await Promise.all([enter(workspaces, ENG_1), enter(workspaces, ENG_2)]);

    expect(one.cwd).not.toBe(two.cwd);
    for (const [lease, issue] of [
      [one, ENG_1],
      [two, ENG_2],
    ] as const) {
      expect(lease.cwd.startsWith(`${root}${path.sep}`)).toBe(true);
      expect(path.basename(lease.cwd)).toBe(issue.identifier);
      expect(lease.worktree?.branch).toBe(`switchboard/${issue.identifier}`);
      expect(git(lease.cwd, "rev-parse", "--abbrev-ref", "HEAD")).toBe(`switchboard/${issue.identifier}`);
      expect(readFileSync(path.join(lease.cwd, "README.md"), "utf8")).toBe("hello\n");
    }
    expect(git(repo, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(3);
    expect(await workspaces.heldIssueIds()).toEqual(expect.arrayContaining(["issue-1", "issue-2"]));
    expectMainCheckoutUntouched();
  });

  it("gives the same issue the same worktree, made once even when two runs ask at once", async () => {
    const workspaces = new Workspaces(root, null);
    const [first, second] = await Promise.all([enter(workspaces), enter(workspaces)]);
    expect(second.cwd).toBe(first.cwd);
    writeFileSync(path.join(first.cwd, "work.txt"), "in progress\n");

    const again = await enter(workspaces);
    expect(again.cwd).toBe(first.cwd);
    expect(readFileSync(path.join(again.cwd, "work.txt"), "utf8")).toBe("in progress\n");
    // A runner started later (a new process) finds the same worktree and knows it holds it.
    const restarted = new Workspaces(root, null);
    expect((await enter(restarted)).cwd).toBe(first.cwd);
    expect(await restarted.heldIssueIds()).toEqual(["issue-1"]);
  });

  it("works in the same subdirectory of the worktree when the workspace is one of the repository", async () => {
    const lease = await enter(new Workspaces(root, null), ENG_1, path.join(repo, "src"));
    expect(path.basename(lease.cwd)).toBe("src");
    expect(readFileSync(path.join(lease.cwd, "index.ts"), "utf8")).toBe("export {};\n");
    expect(git(lease.cwd, "rev-parse", "--abbrev-ref", "HEAD")).toBe("switchboard/ENG-1");
  });

  it("runs in the workspace itself with the shared strategy, without an issue, or outside a repository", async () => {
    const workspaces = new Workspaces(root, null);
    const shared = await workspaces.enter({ cwd: repo, issue: ENG_1, strategy: "shared" });
    const noIssue = await workspaces.enter({ cwd: repo, issue: null, strategy: "worktree" });
    const plain = path.join(base, "not-a-repo");
    mkdirSync(plain);
    const outside = await workspaces.enter({ cwd: plain, issue: ENG_1, strategy: "worktree" });

    expect([shared.cwd, noIssue.cwd, outside.cwd]).toEqual([repo, repo, plain]);
    expect([shared.worktree, noIssue.worktree, outside.worktree]).toEqual([null, null, null]);
    expect(existsSync(root)).toBe(false);
    expect(git(repo, "branch", "--list", "switchboard/*")).toBe("");
    expect(await workspaces.heldIssueIds()).toEqual([]);
  });

  it("removes a closed issue's worktree, keeps its branch and commits, and touches nothing else", async () => {
    const workspaces = new Workspaces(root, null);
    const lease = await enter(workspaces);
    const other = await enter(workspaces, ENG_2);
    writeFileSync(path.join(lease.cwd, "feature.txt"), "done\n");
    git(lease.cwd, "add", "feature.txt");
    git(lease.cwd, "commit", "-qm", "the agent's work");
    writeFileSync(path.join(lease.cwd, "scratch.txt"), "uncommitted\n");
    const stranger = path.join(root, "not-ours.txt");
    writeFileSync(stranger, "keep me\n");

    // In use by a running run: it waits.
    expect(await workspaces.remove(["issue-1"])).toEqual([]);
    expect(existsSync(lease.cwd)).toBe(true);

    lease.release();
    expect(await workspaces.remove(["issue-1", "unknown-issue"])).toEqual([lease.cwd]);
    expect(existsSync(lease.cwd)).toBe(false);
    expect(git(repo, "log", "--format=%s", "switchboard/ENG-1")).toBe("the agent's work\nfirst");
    expect(git(repo, "worktree", "list", "--porcelain")).not.toContain(lease.cwd);
    expect(existsSync(other.cwd)).toBe(true);
    expect(readFileSync(stranger, "utf8")).toBe("keep me\n");
    expect(await workspaces.heldIssueIds()).toEqual(["issue-2"]);
    expectMainCheckoutUntouched();

    // The issue reopened: its worktree comes back on the kept branch, with the agent's commit.
    const reopened = await enter(workspaces);
    expect(reopened.cwd).toBe(lease.cwd);
    expect(readFileSync(path.join(reopened.cwd, "feature.txt"), "utf8")).toBe("done\n");
  });

  it("a run works in its issue's worktree (a real child process through AgentProcess)", async () => {
    const workspaces = new Workspaces(root, null);
    const output: string[] = [];
    const outcome = await new AgentProcess(
      {
        runId: "run-1",
        agentId: "agent-1",
        adapterType: "process",
        command: "pwd",
        args: [],
        cwd: repo,
        issue: ENG_1,
        prompt: "",
        timeoutSec: 30,
        env: {},
      },
      {
        workDir: path.join(base, "runner"),
        runAs: null,
        workspaces,
        onOutput: (stream, text) => {
          if (stream === "stdout") output.push(text);
        },
      },
    ).start();

    expect(outcome.exitCode).toBe(0);
    const pwd = output.join("").trim();
    expect(pwd).toBe((await enter(new Workspaces(root, null))).cwd);
    expect(pwd.startsWith(`${root}${path.sep}`)).toBe(true);
    // The run is over, so nothing holds the worktree any more.
    expect(await workspaces.remove(["issue-1"])).toEqual([pwd]);
    expectMainCheckoutUntouched();
  });
});
