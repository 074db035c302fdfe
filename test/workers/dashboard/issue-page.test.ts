// The compact issue page (issue 30), in workerd through the dashboard URLs: one status control (the
// properties panel, whose note goes with the change and survives a refusal), Cancel and Delete only in
// the Actions menu, the timeline's sentences for the issue's other activity, and a viewer's read-only
// properties with no menu.
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, elementOf, submit, textOf } from "./helpers";

type Json = Record<string, unknown>;
interface Issue {
  id: string;
  identifier: string;
  status: string;
}

let owner: Session;
let viewer: Session;
let companyId: string;

beforeAll(async () => {
  owner = await createUser("OWNER");
  viewer = await createUser("OWNER");
  const company = await call<{ id: string }>("POST", "/api/companies", {
    headers: asSession(owner),
    body: { name: `Compact ${crypto.randomUUID().slice(0, 6)}` },
  });
  companyId = company.body.id;
  const invite = await call<{ token: string }>("POST", `/api/companies/${companyId}/member-invites`, {
    headers: asSession(owner),
    body: { role: "viewer" },
  });
  await call("POST", `/api/member-invites/${invite.body.token}/accept`, { headers: asSession(viewer) });
});

async function createIssue(body: Json): Promise<Issue> {
  const res = await call<Issue>("POST", `/api/companies/${companyId}/issues`, {
    headers: asSession(owner),
    body,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const flashOf = (headers: Headers) => decodeURIComponent(headers.get("set-cookie") ?? "");
const statusSelects = (html: string) => html.match(/<select[^>]*name="status"/g) ?? [];
const actionsMenu = (html: string) =>
  html.match(/<details class="card-menu issue-actions"[\s\S]*?<\/details>/)?.[0] ?? "";

describe("the compact issue page", () => {
  it("changes the status with a note in the properties panel; a refused move keeps the note", async () => {
    const issue = await createIssue({ title: "Move me" });
    const move = (status: string, comment: string) =>
      submit(owner, `/issues/${issue.id}/quick-edit`, { companyId, back: "issue", status, comment });
    const res = await move("todo", "ready");
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/issues/${issue.id}`);
    expect(flashOf(res.headers)).toContain(`${issue.identifier} saved`);
    const comments = async () =>
      (await call<Json[]>("GET", `/api/issues/${issue.id}/comments`, { headers: asSession(owner) })).body;
    expect((await comments()).map((comment) => comment.body)).toEqual(["ready"]);

    const refused = await move("done", "skip ahead");
    expect(refused.status).toBe(422);
    expect(textOf(refused.html)).toContain("Not changed: Cannot move an issue from todo to done");
    expect(refused.html).toMatch(
      /<textarea id="qe-issue-[\w-]+-note" name="comment"[^>]*>skip ahead<\/textarea>/,
    );
    const still = await call<Issue>("GET", `/api/issues/${issue.id}`, { headers: asSession(owner) });
    expect(still.body.status).toBe("todo");
    expect(await comments()).toHaveLength(1);
    // The panel's select is the page's only status control, and it shows the status as it is.
    const page = await browse(owner, `/issues/${issue.id}`);
    expect(page.html.match(/<select[^>]*name="status"/g)).toHaveLength(1);
    expect(page.html).toContain('<option value="todo" selected="">todo</option>');
  });

  it("keeps Cancel and Delete in the Actions menu, and nowhere else on the page", async () => {
    const issue = await createIssue({ title: "Out of the way" });
    const page = await browse(owner, `/issues/${issue.id}`);
    expect(statusSelects(page.html)).toHaveLength(1);
    expect(page.html).not.toContain(`action="/issues/${issue.id}/update"`);
    const menu = actionsMenu(page.html);
    expect(menu).toContain(`<summary aria-label="Actions for ${issue.identifier}">Actions</summary>`);
    expect(menu).toContain(`action="/issues/${issue.id}/cancel"`);
    expect(menu).toContain(`action="/issues/${issue.id}/delete"`);
    const rest = page.html.replace(menu, "");
    expect(rest).not.toContain(`action="/issues/${issue.id}/cancel"`);
    expect(rest).not.toContain(`action="/issues/${issue.id}/delete"`);
    // The menu's Cancel still works without script.
    const cancelled = await submit(owner, `/issues/${issue.id}/cancel`, {});
    expect(cancelled.status).toBe(303);
    const after = await browse(owner, `/issues/${issue.id}`);
    expect(textOf(elementOf(after.html, "issue-status", "span"))).toBe("cancelled");
    expect(actionsMenu(after.html)).not.toContain(`action="/issues/${issue.id}/cancel"`);
  });

  it("says in the timeline who asked, attached and changed what, in order", async () => {
    const issue = await createIssue({ title: "Busy issue" });
    const headers = asSession(owner);
    expect(
      (await call("POST", `/api/issues/${issue.id}/questions`, { headers, body: { body: "Why?" } })).status,
    ).toBe(201);
    const form = new FormData();
    form.append("file", new File(["plan\n"], "plan.md", { type: "text/markdown" }));
    expect(
      (await call("POST", `/api/issues/${issue.id}/attachments`, { headers, rawBody: form })).status,
    ).toBe(201);
    expect(
      (await call("PATCH", `/api/issues/${issue.id}`, { headers, body: { priority: "low" } })).status,
    ).toBe(200);
    const page = await browse(viewer, `/issues/${issue.id}`);
    const timeline = elementOf(page.html, "issue-live");
    const lines = [
      ...timeline.matchAll(/<li class="timeline-entry[^"]*" data-kind="event">([\s\S]*?)<\/li>/g),
    ];
    expect(lines.map(([, body]) => textOf(body ?? "").replace(/, \d{4}-.*$/, ""))).toEqual([
      "AO A OWNER created the issue",
      "AO A OWNER asked a question",
      "AO A OWNER attached plan.md",
      "AO A OWNER changed priority",
    ]);
  });

  it("shows a viewer the properties as text, with no status control and no Actions menu", async () => {
    const issue = await createIssue({ title: "Just looking", priority: "high", dueDate: "2026-12-24" });
    const page = await browse(viewer, `/issues/${issue.id}`);
    expect(page.status).toBe(200);
    expect(statusSelects(page.html)).toHaveLength(0);
    expect(actionsMenu(page.html)).toBe("");
    expect(page.html).not.toContain('aria-label="Comment"');
    const properties = textOf(elementOf(page.html, "issue-properties-live"));
    expect(properties).toContain(
      "Status backlog Assignee Unassigned Priority Priority high Due date 2026-12-24",
    );
  });
});
