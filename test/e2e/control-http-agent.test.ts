// The http adapter end to end: the example agent (docs/examples/http-agent/worker.mjs) served by
// workerd (Miniflare) beside the local stack. An assignment wakes it with a signed POST from the edge;
// it checks the issue out, comments and answers 200, and the run succeeds. A 500 then a 200 is one run
// retried (same Idempotency-Key), not two. An agent that answers 202 and never finishes times out and
// its checkout is released. A forged or replayed wake is refused by the example agent.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signedHeaders } from "../../workers/webhooks/signing.ts";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { type Stack, startStack } from "../support/stack.ts";

const here = path.dirname(fileURLToPath(import.meta.url));
const EXAMPLE = path.join(here, "..", "..", "docs", "examples", "http-agent", "worker.mjs");
const HARNESS = path.join(here, "fixtures", "http-agent-harness.mjs");
const SECRET = "whsec_dGVzdC1odHRwLWFnZW50LXNpZ25pbmctc2VjcmV0IQ==";

interface Run {
  id: string;
  status: string;
  errorReason: string | null;
  issueId: string | null;
}
interface Issue {
  id: string;
  status: string;
  checkoutRunId?: string | null;
  assigneeAgentId: string | null;
}

let stack: Stack;
let agentServer: Miniflare;
let agentUrl: URL;
let board: ApiClient;
let companyId: string;
let secretId: string;

beforeAll(async () => {
  agentServer = new Miniflare({
    modules: [
      { type: "ESModule", path: "harness.mjs", contents: readFileSync(HARNESS, "utf8") },
      { type: "ESModule", path: "worker.mjs", contents: readFileSync(EXAMPLE, "utf8") },
    ],
    bindings: { WAKE_SECRET: SECRET },
    host: "127.0.0.1",
    port: 0,
  });
  agentUrl = await agentServer.ready;
  stack = await startStack({
    env: { BRIDGE: "0", RUNNER: "0", WEBHOOK_ALLOWED_HOSTS: "127.0.0.1,localhost" },
  });
  board = await adminClient(stack.baseUrl);
  const company = await board.call<{ id: string }>("POST", "/api/companies", {
    name: `Http ${Math.random().toString(36).slice(2, 8)}`,
  });
  expect(company.status).toBe(201);
  companyId = company.body.id;
  const secret = await board.call<{ id: string }>("POST", `/api/companies/${companyId}/secrets`, {
    name: "Wake secret",
    value: SECRET,
  });
  expect(secret.status, JSON.stringify(secret.body)).toBe(201);
  secretId = secret.body.id;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await agentServer?.dispose();
});

async function httpAgent(name: string, route: string, timeoutSec = 60): Promise<{ id: string }> {
  const created = await board.call<{ id: string }>("POST", `/api/companies/${companyId}/agents`, {
    name,
    role: "engineer",
    adapterType: "http",
    adapterConfig: {
      url: new URL(route, agentUrl).href,
      timeoutSec,
      env: { WAKE_SECRET: { type: "secret_ref", secretId } },
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

async function assignedIssue(agentId: string, title: string): Promise<Issue> {
  const created = await board.call<Issue>("POST", `/api/companies/${companyId}/issues`, {
    title,
    status: "todo",
    assigneeAgentId: agentId,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

const runsOf = async (agentId: string) =>
  (await board.call<Run[]>("GET", `/api/companies/${companyId}/heartbeat-runs?agentId=${agentId}`)).body;

const ended = (agentId: string, what: string) =>
  eventually(
    async () => {
      const runs = await runsOf(agentId);
      return runs.length > 0 && runs.every((run) => !["queued", "running"].includes(run.status))
        ? runs
        : undefined;
    },
    60_000,
    what,
  );

async function commentsOn(issueId: string): Promise<Array<{ body: string }>> {
  const listed = await board.call<unknown>("GET", `/api/issues/${issueId}/comments`);
  const body = listed.body as Array<{ body: string }> | { items: Array<{ body: string }> };
  return Array.isArray(body) ? body : body.items;
}

async function wakesSeen(): Promise<string[]> {
  return (await fetch(new URL("/seen", agentUrl))).json() as Promise<string[]>;
}

describe("http agents", () => {
  it("an assignment wakes the example agent: it checks out, comments and the run succeeds", async () => {
    const agent = await httpAgent("Edge agent", "/ok");
    const task = await assignedIssue(agent.id, "Say hello from the edge");
    const runs = await ended(agent.id, "the http run to end");
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "succeeded", issueId: task.id });
    const issue = (await board.call<Issue>("GET", `/api/issues/${task.id}`)).body;
    expect(issue.status).toBe("in_progress");
    const comments = await commentsOn(task.id);
    expect(comments.map((comment) => comment.body).join("\n")).toContain(`run ${runs[0]?.id}`);
  });

  it("a 500 then a 200 is the same run retried, not a second run", async () => {
    const agent = await httpAgent("Flaky agent", "/flaky");
    const task = await assignedIssue(agent.id, "Survive a 500");
    const runs = await ended(agent.id, "the retried run to end");
    expect(runs).toHaveLength(1);
    const run = runs[0] as Run;
    expect(run.status).toBe("succeeded");
    expect((await wakesSeen()).filter((seen) => seen.startsWith("/flaky"))).toEqual([
      `/flaky ${run.id}`,
      `/flaky ${run.id}`,
    ]);
    const mine = (await commentsOn(task.id)).filter((comment) => comment.body.includes("HTTP agent"));
    expect(mine).toHaveLength(1);
  });

  it("an agent that accepts (202) and never finishes times out, and its checkout is released", async () => {
    const agent = await httpAgent("Hung agent", "/hang", 3);
    const task = await assignedIssue(agent.id, "Hang forever");
    const runs = await ended(agent.id, "the hung run to time out");
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "timed_out", errorReason: "timeout" });
    const issue = (await board.call<Issue>("GET", `/api/issues/${task.id}`)).body;
    expect(issue.status).toBe("todo");
    expect(issue.checkoutRunId ?? null).toBeNull();
  });

  it("the example agent refuses a forged and a replayed wake", async () => {
    const body = JSON.stringify({ run: { id: "r", reason: "test" }, issue: null });
    const now = Math.floor(Date.now() / 1000);
    const post = (headers: Record<string, string>) =>
      fetch(new URL("/ok", agentUrl), { method: "POST", headers: { ...headers }, body });
    const forged = await post(
      await signedHeaders("whsec_Zm9yZ2VkLXNlY3JldC1mb3JnZWQtc2VjcmV0IQ==", "msg_forged", now, body),
    );
    expect(forged.status).toBe(401);
    const genuine = await signedHeaders(SECRET, "msg_once", now, body);
    expect((await post(genuine)).status).toBe(200);
    const replayed = await post(genuine);
    expect(replayed.status).toBe(401);
    expect(await replayed.json()).toEqual({ error: "replayed message id" });
    const stale = await post(await signedHeaders(SECRET, "msg_stale", now - 3600, body));
    expect(stale.status).toBe(401);
  });
});
