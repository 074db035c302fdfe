// The board a team works on (issue 30), in workerd through the dashboard URLs: each card's Edit menu
// (status, assignee, agent or person, priority, due date, labels) saved without script and, as the
// board's script sends it, as JSON; a refused move explained and nothing changed; another company's
// issue is a 404; cards show labels, due dates (overdue marked) and people by name; the filters by
// label, person and due date; a column draws 50 cards and links to the rest.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, submit, textOf } from "./helpers";

interface Issue {
  id: string;
  identifier: string;
  status: string;
  priority: string;
  assigneeAgentId: string | null;
  assigneeUserId: string | null;
  dueDate: string | null;
  labelIds?: string[];
}

let owner: Session;
let member: Session & { email: string };
let stranger: Session;
let companyId: string;
let labelId: string;

async function api<T>(method: string, path: string, body?: unknown, as: Session = owner) {
  return call<T>(method, path, { headers: asSession(as), body });
}

async function newIssue(body: Record<string, unknown>): Promise<Issue> {
  const res = await api<Issue>("POST", `/api/companies/${companyId}/issues`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const issueNow = async (id: string) =>
  (await api<Issue & { labelIds: string[] }>("GET", `/api/issues/${id}`)).body;

const scripted = { "X-Dashboard-Fetch": "1" };

beforeAll(async () => {
  owner = await createUser("OWNER");
  member = await createUser("OWNER");
  stranger = await createUser("OWNER");
  const company = await api<{ id: string }>("POST", "/api/companies", {
    name: `Quick ${crypto.randomUUID().slice(0, 6)}`,
  });
  companyId = company.body.id;
  await env.DB.prepare(
    "INSERT INTO company_memberships (company_id, user_id, role, created_at) VALUES (?, ?, 'member', ?)",
  )
    .bind(companyId, member.userId, Date.now())
    .run();
  await env.DB.prepare("UPDATE users SET name = 'Grace Hopper' WHERE id = ?").bind(member.userId).run();
  const label = await api<{ id: string }>("POST", `/api/companies/${companyId}/labels`, { name: "Launch" });
  labelId = label.body.id;
});

describe("the board's Edit menu", () => {
  it("saves status, a person as assignee, priority, due date and labels without script", async () => {
    const issue = await newIssue({ title: "Plan the party" });
    const saved = await submit(owner, `/issues/${issue.id}/quick-edit`, {
      companyId,
      status: "todo",
      assignee: `user:${member.userId}`,
      priority: "high",
      dueDate: "2026-12-24",
      labelsShown: "1",
      [`label:${labelId}`]: "1",
    });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/companies/${companyId}/issues`);
    expect(await issueNow(issue.id)).toMatchObject({
      status: "todo",
      assigneeUserId: member.userId,
      assigneeAgentId: null,
      priority: "high",
      dueDate: "2026-12-24",
      labelIds: [labelId],
    });
    // Unticking every label and emptying the date clears them; nobody as assignee unassigns.
    await submit(owner, `/issues/${issue.id}/quick-edit`, {
      companyId,
      labelsShown: "1",
      dueDate: "",
      assignee: "",
    });
    expect(await issueNow(issue.id)).toMatchObject({ labelIds: [], dueDate: null, assigneeUserId: null });
  });

  it("explains a refused move on the board and changes nothing", async () => {
    const issue = await newIssue({ title: "Skip ahead", status: "todo", assigneeUserId: member.userId });
    const refused = await submit(owner, `/issues/${issue.id}/quick-edit`, { companyId, status: "done" });
    expect(refused.status).toBe(422);
    expect(textOf(refused.html)).toContain("Not changed: Cannot move an issue from todo to done");
    expect((await issueNow(issue.id)).status).toBe("todo");

    const json = await submit(
      owner,
      `/issues/${issue.id}/quick-edit`,
      { companyId, status: "done" },
      scripted,
    );
    expect(json.status).toBe(422);
    expect(JSON.parse(json.html)).toEqual({ ok: false, message: "Cannot move an issue from todo to done" });
    const moved = await submit(
      owner,
      `/issues/${issue.id}/quick-edit`,
      { companyId, status: "cancelled" },
      scripted,
    );
    expect(JSON.parse(moved.html)).toEqual({ ok: true, message: `${issue.identifier} saved` });
    expect((await issueNow(issue.id)).status).toBe("cancelled");
  });

  it("is also the issue page's properties panel, which returns to the issue page", async () => {
    const issue = await newIssue({ title: "From its own page" });
    const page = await browse(owner, `/issues/${issue.id}`);
    expect(page.html).toContain('aria-labelledby="issue-properties"');
    expect(page.html).toContain(`<option value="user:${member.userId}">Grace Hopper</option>`);
    const saved = await submit(owner, `/issues/${issue.id}/quick-edit`, {
      companyId,
      back: "issue",
      priority: "critical",
      assignee: `user:${member.userId}`,
    });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/issues/${issue.id}`);
    expect(await issueNow(issue.id)).toMatchObject({ priority: "critical", assigneeUserId: member.userId });
    const refused = await submit(owner, `/issues/${issue.id}/quick-edit`, {
      companyId,
      back: "issue",
      status: "done",
    });
    expect(refused.status).toBe(422);
    expect(textOf(refused.html)).toContain("Not changed: Cannot move an issue from backlog to done");
    expect(textOf(refused.html)).toContain("From its own page");
  });

  it("answers another company's issue with 404 and changes nothing", async () => {
    const issue = await newIssue({ title: "Ours alone" });
    const res = await submit(
      stranger,
      `/issues/${issue.id}/quick-edit`,
      { companyId, status: "todo" },
      scripted,
    );
    expect(res.status).toBe(404);
    expect((await issueNow(issue.id)).status).toBe("backlog");
  });
});

describe("cards and filters", () => {
  it("show labels, due dates (overdue marked), people by name, and filter by them", async () => {
    const late = await newIssue({
      title: "Overdue thing",
      assigneeUserId: member.userId,
      dueDate: "2020-01-01",
      labelIds: [labelId],
    });
    const later = await newIssue({ title: "Far future thing", dueDate: "2999-01-01" });
    const page = await browse(owner, `/companies/${companyId}/issues`);
    const card =
      page.html.match(new RegExp(`<article[^>]*id="card-${late.id}"[\\s\\S]*?</article>`))?.[0] ?? "";
    const face = textOf(card.replace(/<details[\s\S]*?<\/details>/g, ""));
    expect(face).toContain("GH Grace Hopper");
    expect(face).toContain("Launch");
    expect(face).toContain("Overdue: 2020-01-01");
    expect(card).toContain('draggable="true"');

    const byLabel = textOf((await browse(owner, `/companies/${companyId}/issues?labelId=${labelId}`)).html);
    expect(byLabel).toContain("Overdue thing");
    expect(byLabel).not.toContain("Far future thing");
    const byPerson = textOf(
      (await browse(owner, `/companies/${companyId}/issues?assignee=user:${member.userId}`)).html,
    );
    expect(byPerson).toContain("Overdue thing");
    expect(byPerson).not.toContain("Far future thing");
    const dueSoon = textOf((await browse(owner, `/companies/${companyId}/issues?dueBefore=2030-01-01`)).html);
    expect(dueSoon).toContain("Overdue thing");
    expect(dueSoon).not.toContain(later.identifier);
  });

  it("a column draws 50 cards and links to the rest of it", async () => {
    const company = await api<{ id: string }>("POST", "/api/companies", {
      name: `Many ${crypto.randomUUID().slice(0, 6)}`,
    });
    const statements = Array.from({ length: 53 }, (_, i) =>
      env.DB.prepare(
        `INSERT INTO issues (id, company_id, issue_number, identifier, title, status, priority, priority_rank, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'backlog', 'medium', 2, ?, ?)`,
      ).bind(crypto.randomUUID(), company.body.id, i + 1, `MANY${i}-${i + 1}`, `Bulk ${i}`, i, i),
    );
    await env.DB.batch(statements);
    const page = await browse(owner, `/companies/${company.body.id}/issues`);
    expect(page.status).toBe(200);
    expect(page.html.match(/<article class="card"/g)?.length).toBe(50);
    expect(textOf(page.html)).toContain("backlog (53)");
    expect(page.html).toContain(`href="/companies/${company.body.id}/issues?status=backlog"`);
    expect(textOf(page.html)).toContain("3 more in backlog");
  });
});
