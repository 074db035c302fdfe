// The issue board and the issue page in workerd, through the dashboard URLs: columns by status, the
// filters, the New issue form; on the issue page its one timeline, properties, the comment and document forms.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { dialRunner } from "../control/runner-link";
import { Link } from "../fake-bridge";
import { asSession, call, count, createUser, type Session } from "../helpers";
import { eventually } from "../patience";
import { browse, elementOf, fieldError, submit, textOf, undrawn } from "./helpers";

type Json = Record<string, unknown>;
interface Issue {
  id: string;
  identifier: string;
  title: string;
  status: string;
}

let owner: Session;
let stranger: Session;
let companyId: string;
let worker: { id: string; name: string };

beforeAll(async () => {
  owner = await createUser("OWNER");
  stranger = await createUser("OWNER");
  const company = await call<{ id: string }>("POST", "/api/companies", {
    headers: asSession(owner),
    body: { name: `Board Co ${crypto.randomUUID().slice(0, 6)}`, requireBoardApprovalForNewAgents: false },
  });
  companyId = company.body.id;
  worker = await hire(`Worker${crypto.randomUUID().slice(0, 4)}`);
});

async function hire(name: string): Promise<{ id: string; name: string }> {
  const res = await call<{ agent: { id: string; name: string } }>(
    "POST",
    `/api/companies/${companyId}/agent-hires`,
    {
      headers: asSession(owner),
      body: { name, role: "engineer", adapterType: "coder_local", adapterConfig: { command: "node" } },
    },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.agent;
}

async function createIssue(body: Json): Promise<Issue> {
  const res = await call<Issue>("POST", `/api/companies/${companyId}/issues`, {
    headers: asSession(owner),
    body,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function patchIssue(id: string, body: Json): Promise<void> {
  const res = await call("PATCH", `/api/issues/${id}`, { headers: asSession(owner), body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

const issueRows = async () =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM issues WHERE company_id = ?")
      .bind(companyId)
      .first<{ n: number }>()
  )?.n ?? 0;

/** The cards of one column: the HTML of the `<section>` whose heading id is `column-<status>`. */
function column(html: string, status: string): string {
  return (
    html.match(new RegExp(`<section aria-labelledby="column-${status}"[^>]*>([\\s\\S]*?)</section>`))?.[1] ??
    ""
  );
}

/** What the cards show on their face (their Edit menus left out). */
const faces = (html: string) => textOf(html.replace(/<details[\s\S]*?<\/details>/g, ""));

/** The live board only (it ends where the New issue panel starts). */
const boardOf = (html: string) =>
  html.match(/<div id="issue-board"[\s\S]*?(?=<section class="panel")/)?.[0] ?? "";

const flashOf = (headers: Headers) => decodeURIComponent(headers.get("set-cookie") ?? "");

describe("issue board", () => {
  it("puts each issue in its status column, with counts, assignee and priority", async () => {
    const waiting = await createIssue({ title: "Sort the mail", priority: "low" });
    const assigned = await createIssue({
      title: "Fix the roof",
      priority: "critical",
      assigneeAgentId: worker.id,
    });
    const finished = await createIssue({ title: "Wash the van", assigneeAgentId: worker.id });
    const checkout = await call("POST", `/api/issues/${finished.id}/checkout`, {
      headers: asSession(owner),
      body: { agentId: worker.id, expectedStatuses: ["todo"] },
    });
    expect(checkout.status).toBe(200);
    await patchIssue(finished.id, { status: "done" });

    const page = await browse(owner, `/companies/${companyId}/issues`);
    expect(page.status).toBe(200);
    // Fed by the company's live socket; the slow poll is only for when it cannot connect.
    expect(undrawn(page.html)).toContain(
      `<div id="issue-board" data-live="30" data-live-feed="/api/companies/${companyId}/events" class="board">`,
    );
    const live = boardOf(page.html);
    // Its only forms are the cards' Edit menus and Cancel (the live script keeps a region whose form
    // holds something unsent or has focus until it is sent).
    const forms = live.match(/<form[^>]*>/g) ?? [];
    expect(forms.length).toBeGreaterThan(0);
    for (const form of forms) expect(form).toMatch(/action="\/issues\/[^"]+\/(cancel|quick-edit)"/);
    expect(faces(column(page.html, "backlog"))).toContain("Sort the mail");
    expect(faces(column(page.html, "backlog"))).toContain("Unassigned");
    expect(faces(column(page.html, "todo"))).toMatch(
      new RegExp(`${assigned.identifier} Fix the roof Priority critical [A-Z]{1,2} ${worker.name}`),
    );
    expect(faces(column(page.html, "done"))).toContain("Wash the van");
    expect(textOf(column(page.html, "in_review"))).toBe("in review (0)");
    expect(column(page.html, "backlog")).toContain(`href="/issues/${waiting.id}"`);
    const headings = [...page.html.matchAll(/<section aria-labelledby="column-(\w+)"/g)].map((m) => m[1]);
    expect(headings).toEqual(["backlog", "todo", "in_progress", "in_review", "blocked", "done", "cancelled"]);
  });

  it("filters by search text, status and assignee through the API's query", async () => {
    await createIssue({ title: "Polish the zeppelin", description: "brass fittings" });
    await createIssue({ title: "Feed the cat", assigneeAgentId: worker.id });
    const searched = await browse(owner, `/companies/${companyId}/issues?q=zeppelin`);
    expect(searched.status).toBe(200);
    const text = faces(boardOf(searched.html));
    expect(text).toContain("Polish the zeppelin");
    expect(text).not.toContain("Feed the cat");
    expect(searched.html).toMatch(/id="filter-q" name="q" type="search" value="zeppelin"/);

    const byAssignee = await browse(
      owner,
      `/companies/${companyId}/issues?assignee=agent:${worker.id}&status=todo`,
    );
    const board = faces(boardOf(byAssignee.html));
    expect(board).toContain("Feed the cat");
    expect(board).not.toContain("Polish the zeppelin");
    expect(byAssignee.html).toMatch(new RegExp(`<option value="agent:${worker.id}" selected`));

    const bad = await browse(owner, `/companies/${companyId}/issues?status=nonsense`);
    expect(bad.status).toBe(400);
    expect(textOf(bad.html)).toContain("unknown status nonsense");
  });

  it("creates an issue with the form and opens it with a flash", async () => {
    const res = await submit(owner, `/companies/${companyId}/issues`, {
      title: "Write the welcome note",
      description: "Two lines",
      priority: "high",
      assigneeAgentId: worker.id,
      projectId: "",
    });
    expect(res.status).toBe(303);
    const id = res.location?.match(/^\/issues\/([\w-]+)$/)?.[1] ?? "";
    const issue = await call<Issue & Json>("GET", `/api/issues/${id}`, { headers: asSession(owner) });
    expect(issue.body).toMatchObject({
      title: "Write the welcome note",
      description: "Two lines",
      priority: "high",
      assigneeAgentId: worker.id,
      projectId: null,
      status: "todo",
    });
    expect(flashOf(res.headers)).toContain(`Issue ${issue.body.identifier} created`);
  });

  it("shows the API's messages next to title and assignee and creates nothing", async () => {
    const before = await issueRows();
    const blank = await submit(owner, `/companies/${companyId}/issues`, { title: "  ", priority: "medium" });
    expect(blank.status).toBe(400);
    expect(fieldError(blank.html, "title")).toMatch(/\S/);

    const gone = await call<{ id: string }>("POST", `/api/companies/${companyId}/agents`, {
      headers: asSession(owner),
      body: { name: `Gone${crypto.randomUUID().slice(0, 4)}`, adapterType: "coder_local" },
    });
    expect(gone.status).toBe(201);
    const terminated = await call("POST", `/api/agents/${gone.body.id}/terminate`, {
      headers: asSession(owner),
    });
    expect(terminated.status).toBe(200);
    const terminatedId = gone.body.id;
    const refused = await submit(owner, `/companies/${companyId}/issues`, {
      title: "For nobody",
      priority: "medium",
      assigneeAgentId: terminatedId,
    });
    expect(refused.status).toBe(422);
    expect(fieldError(refused.html, "assigneeAgentId")).toContain("cannot receive assignments");
    expect(refused.html).toContain('value="For nobody"');
    expect(await issueRows()).toBe(before);
  });

  it("answers another user's company with the API's 404 and writes nothing there", async () => {
    const before = await count("issues");
    const res = await submit(stranger, `/companies/${companyId}/issues`, {
      title: "Sneaky",
      priority: "low",
    });
    expect(res.status).toBe(404);
    expect(await count("issues")).toBe(before);
    expect((await browse(stranger, `/companies/${companyId}/issues`)).status).toBe(404);
  });
});

/** A runner the owner registers for the company, connected (registered anew each time). */
async function runnerLink(): Promise<Link> {
  const registered = await call<{ token: string }>("POST", `/api/companies/${companyId}/runners`, {
    headers: asSession(owner),
    body: { name: "dashboard test" },
  });
  expect(registered.status).toBe(201);
  const res = await dialRunner(registered.body.token);
  if (!res.webSocket) throw new Error(`runner upgrade failed: ${res.status}`);
  return new Link(res.webSocket);
}

/** An agent run about `issueId` that printed `output` and exited 0, through the runner link. */
async function finishedRun(issueId: string, output: string, finish: Json = {}): Promise<string> {
  // The dispatcher hands out the oldest queued run: clear the assignment wakes of earlier tests.
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
  const mention = await call("POST", `/api/issues/${issueId}/comments`, {
    headers: asSession(owner),
    body: { body: `@${worker.name} please look` },
  });
  expect(mention.status).toBe(201);
  const link = await runnerLink();
  link.send({ type: "claim", slots: 1 });
  const frame = await link.next((f) => f.type === "run");
  const runId = (frame.run as { runId: string }).runId;
  link.send({ type: "log", runId, seq: 0, stream: "stdout", text: output });
  link.send({ type: "finish", runId, exitCode: 0, timedOut: false, logFrames: 1, ...finish });
  await eventually(async () => {
    const row = await env.DB.prepare("SELECT status FROM heartbeat_runs WHERE id = ?")
      .bind(runId)
      .first<Json>();
    return row?.status === "succeeded";
  });
  link.socket.close(1000, "done");
  return runId;
}

describe("issue page", () => {
  it("draws one timeline, oldest first: creation, a comment, the agent's run and a status change", async () => {
    const issue = await createIssue({ title: "Bake bread", priority: "high", status: "backlog" });
    const runId = await finishedRun(issue.id, "kneading the dough\n", {
      session: { id: "sess-bread", cwd: "/srv/bakery" },
      resumed: true,
    });
    await patchIssue(issue.id, { status: "todo", assigneeAgentId: worker.id });
    const doc = await call("PUT", `/api/issues/${issue.id}/documents/recipe`, {
      headers: asSession(owner),
      body: { title: "Recipe", body: "Flour, water, salt" },
    });
    expect(doc.status).toBe(201);

    const page = await browse(owner, `/issues/${issue.identifier}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain(`<h1>${issue.identifier} Bake bread</h1>`);
    const live = elementOf(undrawn(page.html), "issue-live");
    expect(live).toContain(`data-live-feed="/api/issues/${issue.id}/events"`);
    expect(live).not.toContain("<form");
    expect(textOf(elementOf(page.html, "issue-status", "span"))).toBe("todo");
    // One list, each entry with who (initials and name) and when, in the order it happened.
    expect(live.match(/<ol class="timeline">/g)).toHaveLength(1);
    const entries = [...live.matchAll(/<li class="timeline-entry[^"]*" data-kind="(\w+)">([\s\S]*?)<\/li>/g)];
    expect(entries.map(([, kind, body]) => `${kind}: ${textOf(body ?? "").slice(0, 80)}`)).toEqual([
      expect.stringMatching(/^event: Y You created the issue, \d{4}-/),
      expect.stringMatching(new RegExp(`^comment: Y You, \\d{4}-.* @${worker.name} please look`)),
      expect.stringMatching(new RegExp(`^run: [A-Z]{1,2} ${worker.name} ran succeeded ?, \\d{4}-`)),
      expect.stringMatching(/^event: Y You moved it from backlog to todo and changed assignee, \d{4}-/),
      // The assignment woke the agent again: a run that waits for a runner.
      expect.stringMatching(new RegExp(`^run: [A-Z]{1,2} ${worker.name} ran queued ?, \\d{4}-`)),
    ]);
    // The run links to its page; its details, conversation and output are folded in the entry.
    expect(live).toContain(`href="/runs/${runId}"`);
    const text = textOf(live);
    expect(text).toMatch(/succeeded Woken by issue comment mentioned \(mention\) — A OWNER/);
    expect(text).toContain("Exit code 0");
    expect(text).toContain("CLI session sess-bread (resumed)");
    expect(live).toMatch(/<details class="run-fold"><summary>Details, transcript and output<\/summary>/);
    expect(live).toMatch(/<pre>kneading the dough\n<\/pre>/);
    // The side column: properties (assignee, priority) and the documents, each kept live.
    const properties = elementOf(page.html, "issue-properties-live");
    expect(properties).toMatch(new RegExp(`<option value="agent:${worker.id}" selected="">${worker.name}`));
    expect(properties).toContain('<option value="high" selected="">high</option>');
    const documents = elementOf(page.html, "issue-documents-live");
    expect(textOf(documents)).toContain("Recipe (recipe, revision 1)");
    expect(documents).toContain("<pre>Flour, water, salt</pre>");
    expect(page.html).toContain(`href="/companies/${companyId}/issues" aria-current="page"`);
  });

  it("says a queued run waits for a runner while none serves the company", async () => {
    await env.DB.prepare(
      "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
    ).run();
    const issue = await createIssue({ title: "Nobody to run it", assigneeAgentId: worker.id });
    const page = await browse(owner, `/issues/${issue.identifier}`);
    expect(page.status).toBe(200);
    expect(textOf(page.html)).toMatch(
      /queued .*Waiting for a runner: no runner that serves this company is connected/,
    );
  });

  it("adds a comment with the form; a blank one shows the API's message and adds nothing", async () => {
    const issue = await createIssue({ title: "Talk it over" });
    const res = await submit(owner, `/issues/${issue.id}/comments`, { body: "Sounds good" });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/issues/${issue.id}`);
    expect(flashOf(res.headers)).toContain("Comment added");
    const comments = await call<Json[]>("GET", `/api/issues/${issue.id}/comments`, {
      headers: asSession(owner),
    });
    expect(comments.body.map((comment) => comment.body)).toEqual(["Sounds good"]);

    const blank = await submit(owner, `/issues/${issue.id}/comments`, { body: "   " });
    expect(blank.status).toBe(400);
    expect(fieldError(blank.html, "body")).toBe("must not be blank");
    const after = await call<Json[]>("GET", `/api/issues/${issue.id}/comments`, {
      headers: asSession(owner),
    });
    expect(after.body).toHaveLength(1);
  });

  it("adds a document; a bad key or an existing one shows the message next to key", async () => {
    const issue = await createIssue({ title: "Plan it" });
    const res = await submit(owner, `/issues/${issue.id}/documents`, {
      key: "plan",
      title: "The plan",
      documentBody: "Step one",
    });
    expect(res.status).toBe(303);
    expect(flashOf(res.headers)).toContain("Document plan added");
    const doc = await call<Json>("GET", `/api/issues/${issue.id}/documents/plan`, {
      headers: asSession(owner),
    });
    expect(doc.body).toMatchObject({ title: "The plan", body: "Step one", latestRevisionNumber: 1 });

    const badKey = await submit(owner, `/issues/${issue.id}/documents`, {
      key: "Bad Key!",
      documentBody: "x",
    });
    expect(badKey.status).toBe(400);
    expect(fieldError(badKey.html, "key")).toContain("a-z, 0-9");
    const again = await submit(owner, `/issues/${issue.id}/documents`, {
      key: "plan",
      documentBody: "Other",
    });
    expect(again.status).toBe(409);
    expect(fieldError(again.html, "key")).toMatch(/exists already/);
    const docs = await call<Json[]>("GET", `/api/issues/${issue.id}/documents`, {
      headers: asSession(owner),
    });
    expect(docs.body).toHaveLength(1);
    const unchanged = await call<Json>("GET", `/api/issues/${issue.id}/documents/plan`, {
      headers: asSession(owner),
    });
    expect(unchanged.body.body).toBe("Step one");
  });

  it("answers another user's issue with the API's 404 and changes nothing", async () => {
    const issue = await createIssue({ title: "Private" });
    expect((await browse(stranger, `/issues/${issue.id}`)).status).toBe(404);
    const res = await submit(stranger, `/issues/${issue.id}/comments`, { body: "hi" });
    expect(res.status).toBe(404);
    const comments = await call<Json[]>("GET", `/api/issues/${issue.id}/comments`, {
      headers: asSession(owner),
    });
    expect(comments.body).toEqual([]);
  });
});
