/**
 * A run's working directory when its cwd (the project's workspace) is in a git repository: each
 * issue gets a worktree of its own, `<root>/<repo>-<hash>/<identifier>`, on branch
 * `switchboard/<identifier>` made from the repository's current HEAD, so two issues worked at once
 * never share files and the main checkout is never touched. The worktrees live under the runner's
 * work directory, not inside the repository, so the project's own tools (test runners, linters,
 * watchers) never find a second copy of the code in it. adapterConfig.workspaceStrategy "shared"
 * runs in cwd itself, as does a run without an issue or a cwd outside any repository.
 *
 * Git changes to one repository are made one at a time (the same issue twice gets the same worktree,
 * made once). When the edge says an issue is done or cancelled, its worktree is removed with
 * `git worktree remove --force` (uncommitted changes go with it) and its branch stays, so whatever
 * the agent committed is still reachable. Removal only ever touches directories this class made
 * under its root; a worktree in use by a running run waits for the next check.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { chown, mkdir, readdir, readFile, realpath, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { RunAs } from "./config.ts";
import { branchExists, git, repositoryOf } from "./git.ts";

export type WorkspaceStrategy = "worktree" | "shared";

export interface WorkspaceRequest {
  /** The configured directory: the project's workspace, or adapterConfig.cwd. */
  cwd: string;
  issue: { id: string; identifier: string } | null | undefined;
  strategy: WorkspaceStrategy;
}

export interface WorkspaceLease {
  /** Where the run works. */
  cwd: string;
  /** The issue's worktree and branch, when it has one. */
  worktree: { path: string; branch: string } | null;
  /** The run is over: its worktree may be removed once its issue is closed. */
  release(): void;
}

/** What the runner remembers of a worktree it made (in `<root>/.records`, the runner's own). */
interface WorktreeRecord {
  issueId: string;
  identifier: string;
  /** The main repository's top level, where `git worktree` is run. */
  repo: string;
}

/** Identifiers are `ENG-12`; anything else falls back to the issue id (a uuid) as a name. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export function workspaceStrategy(adapterConfig: Record<string, unknown> | undefined): WorkspaceStrategy {
  return adapterConfig?.workspaceStrategy === "shared" ? "shared" : "worktree";
}

export class Workspaces {
  private readonly records: string;
  /** The tail of each repository's queue of git changes. */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Worktrees this process made or checked: reused without asking git again while their .git is there. */
  private readonly known = new Set<string>();
  /** Running runs per worktree path. */
  private readonly inUse = new Map<string, number>();

  constructor(
    /** The directory the worktrees are made in (the runner's `<work dir>/worktrees`). */
    readonly root: string,
    private readonly runAs: RunAs | null,
  ) {
    this.records = path.join(root, ".records");
  }

  /** The directory a run works in, holding its worktree until `release`. Throws when git refuses. */
  async enter(request: WorkspaceRequest): Promise<WorkspaceLease> {
    const shared = { cwd: request.cwd, worktree: null, release: () => undefined };
    if (request.strategy === "shared" || !request.issue) return shared;
    const repository = await repositoryOf(request.cwd, this.runAs);
    if (!repository) return shared;
    const record: WorktreeRecord = {
      issueId: request.issue.id,
      identifier: request.issue.identifier,
      repo: repository.toplevel,
    };
    const worktree = this.locate(record);
    this.hold(worktree.path, +1);
    try {
      await this.serially(record.repo, () => this.ensure(record, worktree));
      const cwd = path.join(worktree.path, repository.prefix);
      await mkdir(cwd, { recursive: true });
      let released = false;
      const release = () => {
        if (!released) this.hold(worktree.path, -1);
        released = true;
      };
      return { cwd, worktree, release };
    } catch (error) {
      this.hold(worktree.path, -1);
      throw error;
    }
  }

  /** The issues whose worktrees this runner holds (made by this process or an earlier one). */
  async heldIssueIds(): Promise<string[]> {
    return [...new Set((await this.allRecords()).map(({ record }) => record.issueId))];
  }

  /** Removes the worktrees of these issues that no run is using; answers the paths removed. */
  async remove(issueIds: readonly string[]): Promise<string[]> {
    const closed = new Set(issueIds);
    const removed: string[] = [];
    for (const { file, record } of await this.allRecords()) {
      if (!closed.has(record.issueId)) continue;
      const worktree = this.locate(record);
      if ((this.inUse.get(worktree.path) ?? 0) > 0) continue;
      await this.serially(record.repo, async () => {
        await this.removeWorktree(record, worktree.path);
        await rm(file, { force: true });
      });
      removed.push(worktree.path);
    }
    return removed;
  }

  /** Where an issue's worktree of a repository goes, computed (never read back from a record). */
  private locate(record: WorktreeRecord): { path: string; branch: string; recordFile: string } {
    const name = SAFE_NAME.test(record.identifier)
      ? record.identifier
      : record.issueId.replace(/[^\w-]/g, "_");
    const hash = createHash("sha256").update(record.repo).digest("hex").slice(0, 12);
    const repoDir = `${path.basename(record.repo).replace(/[^\w.-]/g, "_")}-${hash}`;
    return {
      path: path.join(this.root, repoDir, name),
      branch: `switchboard/${name}`,
      recordFile: path.join(this.records, `${repoDir}--${name}.json`),
    };
  }

  private hold(worktreePath: string, delta: number): void {
    const count = (this.inUse.get(worktreePath) ?? 0) + delta;
    if (count > 0) this.inUse.set(worktreePath, count);
    else this.inUse.delete(worktreePath);
  }

  /** Runs `work` after every earlier git change to the same repository. */
  private serially<T>(repo: string, work: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(repo) ?? Promise.resolve()).then(work);
    const tail = run.catch(() => undefined);
    this.queues.set(repo, tail);
    void tail.then(() => {
      if (this.queues.get(repo) === tail) this.queues.delete(repo);
    });
    return run;
  }

  /** The worktree exists afterwards: reused when it is there, else made (on its branch if it exists). */
  private async ensure(
    record: WorktreeRecord,
    worktree: { path: string; branch: string; recordFile: string },
  ) {
    if (this.known.has(worktree.path) && existsSync(path.join(worktree.path, ".git"))) return;
    await this.writeRecord(worktree.recordFile, record);
    if (await this.isWorktreeOf(worktree.path, record.repo)) {
      this.known.add(worktree.path);
      return;
    }
    // A worktree directory deleted by hand leaves metadata that would block adding it again.
    await git(record.repo, ["worktree", "prune"], this.runAs);
    await this.makeParent(path.dirname(worktree.path));
    const args = (await branchExists(record.repo, worktree.branch, this.runAs))
      ? ["worktree", "add", worktree.path, worktree.branch]
      : ["worktree", "add", "-b", worktree.branch, worktree.path, "HEAD"];
    await git(record.repo, args, this.runAs);
    this.known.add(worktree.path);
  }

  private async isWorktreeOf(dir: string, repo: string): Promise<boolean> {
    if (!existsSync(dir)) return false;
    const inside = await repositoryOf(dir, this.runAs);
    if (inside?.toplevel !== (await realpath(dir))) return false;
    const common = (repoDir: string) =>
      git(repoDir, ["rev-parse", "--path-format=absolute", "--git-common-dir"], this.runAs).then((out) =>
        out.trim(),
      );
    return (await common(dir).catch(() => "")) === (await common(repo).catch(() => null));
  }

  private async removeWorktree(record: WorktreeRecord, worktreePath: string): Promise<void> {
    this.known.delete(worktreePath);
    // Twice forced: also a worktree someone locked. The branch is not touched.
    await git(record.repo, ["worktree", "remove", "--force", "--force", worktreePath], this.runAs).catch(
      () => undefined,
    );
    // The repository itself may be gone; what is left is ours (computed under root), so it goes too.
    await rm(worktreePath, { recursive: true, force: true });
    await git(record.repo, ["worktree", "prune"], this.runAs).catch(() => undefined);
  }

  private async makeParent(dir: string): Promise<void> {
    await mkdir(this.root, { recursive: true, mode: 0o711 });
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (this.runAs) await chown(dir, this.runAs.uid, this.runAs.gid);
  }

  private async writeRecord(file: string, record: WorktreeRecord): Promise<void> {
    await mkdir(this.records, { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(record)}\n`, { mode: 0o600 });
    await rename(temporary, file);
  }

  private async allRecords(): Promise<Array<{ file: string; record: WorktreeRecord }>> {
    const names = await readdir(this.records).catch(() => [] as string[]);
    const found: Array<{ file: string; record: WorktreeRecord }> = [];
    for (const name of names.filter((entry) => entry.endsWith(".json"))) {
      const file = path.join(this.records, name);
      const record = await readRecord(file);
      if (record) found.push({ file, record });
    }
    return found;
  }
}

async function readRecord(file: string): Promise<WorktreeRecord | null> {
  try {
    const value = JSON.parse(await readFile(file, "utf8")) as Partial<WorktreeRecord>;
    const { issueId, identifier, repo } = value;
    if (typeof issueId === "string" && typeof identifier === "string" && typeof repo === "string")
      return { issueId, identifier, repo };
  } catch {
    // unreadable: ignored (never acted on)
  }
  return null;
}
