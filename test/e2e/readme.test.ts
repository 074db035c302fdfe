// The README, run as written: its ```sh blocks, extracted from README.md itself (so this breaks when the
// README drifts), run in order in one bash shell against a fresh `SIMULATOR=1` stack. A block right
// after `<!-- readme-test: skip (why) -->` is skipped (starting the stack, the whole test suite,
// deploying, a long-running runner). The one rewrite: the README's `localhost:8787` becomes the
// stack's port (another stack may hold 8787). The shell runs in a scratch folder that looks like the
// checkout: `docs` is the repository's, `.wrangler/state` is the stack's fresh state directory, and
// HOME is the scratch folder, so nothing lands in the real checkout or home. Every curl fails on an
// HTTP error (a `curl` function adds --fail-with-body), every command must succeed (`set -eu -o
// pipefail`), and afterwards the test checks what a reader would see in the dashboard.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient } from "../support/api.ts";
import { type Stack, startStack } from "../support/stack.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const SKIP_MARKER = /^<!-- readme-test: skip \((.+)\) -->$/;
const SCRIPT_TIMEOUT_MS = 150_000;

interface Block {
  /** 1-based line of the opening fence in README.md. */
  readonly line: number;
  readonly text: string;
  /** Why the block is not run, from its marker; null: it runs. */
  readonly skip: string | null;
}

/** Every ```sh block of `markdown`, with the skip marker on the line before it (blank lines between allowed). */
function shellBlocks(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trim() !== "```sh") continue;
    const end = lines.findIndex((line, j) => j > i && line.trim() === "```");
    if (end < 0) throw new Error(`README.md:${i + 1}: a \`\`\`sh block is never closed`);
    let before = i - 1;
    while (before >= 0 && lines[before]?.trim() === "") before--;
    const skip = SKIP_MARKER.exec(lines[before]?.trim() ?? "")?.[1] ?? null;
    blocks.push({ line: i + 1, text: lines.slice(i + 1, end).join("\n"), skip });
    i = end;
  }
  return blocks;
}

/** The one change made to the README's commands: its port is the test stack's. */
const onPort = (text: string, port: number) =>
  text.replace(/\b(localhost|127\.0\.0\.1):8787\b/g, `127.0.0.1:${port}`);

function scriptOf(blocks: Block[], port: number, marks: string): string {
  const parts = [
    "set -eu -o pipefail",
    // Only for this test: an HTTP error status fails the command (and, by pipefail, its pipeline).
    'curl() { command curl --fail-with-body "$@"; }',
  ];
  blocks.forEach((block, index) => {
    if (block.skip !== null) return;
    parts.push(`echo ${index} >> ${JSON.stringify(marks)}`, onPort(block.text, port));
  });
  parts.push(`echo done >> ${JSON.stringify(marks)}`);
  return `${parts.join("\n")}\n`;
}

function runBash(script: string, cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", script], { cwd, env: { ...process.env, HOME: cwd }, detached: true });
    let output = "";
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-12_000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const timer = setTimeout(() => {
      output += `\n[readme test: killed after ${SCRIPT_TIMEOUT_MS} ms]`;
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    }, SCRIPT_TIMEOUT_MS);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

let stack: Stack;
let scratch: string;

beforeAll(async () => {
  stack = await startStack({ emptyDatabase: true, env: { SIMULATOR: "1" } });
  scratch = await mkdtemp(path.join(tmpdir(), "switchboard-readme-"));
  await symlink(path.join(REPO_ROOT, "docs"), path.join(scratch, "docs"));
  await mkdir(path.join(scratch, ".wrangler"));
  await symlink(stack.stateDir, path.join(scratch, ".wrangler", "state"));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("README.md", () => {
  it("runs top to bottom as written, and does what it says", async () => {
    const blocks = shellBlocks(await readFile(path.join(REPO_ROOT, "README.md"), "utf8"));
    expect(blocks.filter((b) => b.skip === null).length).toBeGreaterThan(5);
    const marks = path.join(scratch, ".readme-test-marks");
    const { code, output } = await runBash(scriptOf(blocks, stack.port, marks), scratch);
    const reached = (await readFile(marks, "utf8").catch(() => "")).trim().split("\n").pop() ?? "";
    if (code !== 0 || reached !== "done") {
      const block = blocks[Number(reached)];
      const where = block ? `the block at README.md:${block.line}:\n${block.text}` : "before the first block";
      throw new Error(
        `exit ${code} in ${where}\n--- output ---\n${output}\n--- stack ---\n${stack.output()}`,
      );
    }

    const admin: ApiClient = await adminClient(stack.baseUrl); // a new key: after the README's is done with
    const session = await admin.call<{ data: { status: string; me: { id: string } | null } }>(
      "GET",
      "/api/sessions/demo",
    );
    expect(output).toContain("sim-qr:"); // the QR's text, fetched right after start
    expect(session.body.data).toMatchObject({ status: "Connected" });
    const chat = await admin.call<{ data: { content: unknown }[] }>(
      "GET",
      "/api/chat/demo/628123456789%40s.whatsapp.net",
    );
    expect(JSON.stringify(chat.body.data)).toContain("Hello");
    const webhooks = await admin.call<{ data: { name: string }[] }>("GET", "/api/webhooks/demo");
    expect(webhooks.body.data.map((w) => w.name)).toContain("CRM");

    const companies = await admin.call<{ id: string; name: string }[]>("GET", "/api/companies");
    const acme = companies.body.find((c) => c.name === "Acme Labs");
    expect(acme).toBeDefined();
    const agents = await admin.call<{ id: string; name: string }[]>(
      "GET",
      `/api/companies/${acme?.id}/agents`,
    );
    const idOf = (name: string) => agents.body.find((a) => a.name === name)?.id;
    const issue = await admin.call<{ status: string; identifier: string }>("GET", "/api/issues/ACM-1");
    expect(issue.body).toMatchObject({ identifier: "ACM-1", status: "done" });
    const runs = await admin.call<{ agentId: string; status: string; wakeReason: string }[]>(
      "GET",
      `/api/companies/${acme?.id}/heartbeat-runs`,
    );
    expect(runs.body.filter((r) => r.agentId === idOf("Builder")).map((r) => r.status)).toEqual([
      "succeeded",
    ]);
    expect(runs.body.filter((r) => r.agentId === idOf("Reviewer")).map((r) => r.status)).toEqual([
      "succeeded",
    ]);
    const comments = await admin.call<{ body: string; authorAgentId: string | null }[]>(
      "GET",
      "/api/issues/ACM-1/comments",
    );
    expect(comments.body.find((c) => c.body.startsWith("Reviewed ACM-1"))?.authorAgentId).toBe(
      idOf("Reviewer"),
    );
    expect(output).toContain("/invites/swm_"); // the member invite link was printed
  });
});
