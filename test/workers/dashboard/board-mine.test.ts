// The Mine view (issue 30), in workerd through the dashboard URLs: a company's Mine lists the issues
// assigned to the viewer there (not others'), each unread once someone else assigns or comments, read
// again once the viewer opens its page, with when they
// last touched it and the outside comment; Mark read clears it and returns to the view; /mine (the
// header's link) lists them across companies; another company's Mine is a 404; the board links to Mine
// and documents its keyboard shortcuts.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, submit, textOf } from "./helpers";

interface Issue {
  id: string;
  identifier: string;
}

let owner: Session;
let member: Session;
let stranger: Session;
let companyId: string;

async function api<T>(method: string, path: string, body?: unknown, as: Session = owner) {
  return call<T>(method, path, { headers: asSession(as), body });
}

async function newIssue(body: Record<string, unknown>): Promise<Issue> {
  const res = await api<Issue>("POST", `/api/companies/${companyId}/issues`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** The Mine list item of `issue` on `html`, as text ("" when it is not listed). */
function itemText(html: string, issue: Issue): string {
  const match = html.match(new RegExp(`<li [^>]*data-mine-issue="${issue.id}"[^>]*>([\\s\\S]*?)</li>`));
  return match?.[1] ? textOf(match[1]) : "";
}

beforeAll(async () => {
  owner = await createUser("OWNER");
  member = await createUser("OWNER");
  stranger = await createUser("OWNER");
  const company = await api<{ id: string }>("POST", "/api/companies", {
    name: `Mine ${crypto.randomUUID().slice(0, 6)}`,
  });
  companyId = company.body.id;
  await env.DB.prepare(
    "INSERT INTO company_memberships (company_id, user_id, role, created_at) VALUES (?, ?, 'member', ?)",
  )
    .bind(companyId, member.userId, Date.now())
    .run();
});

describe("the Mine view", () => {
  it("lists my assigned issues, unread after someone else comments, until I mark it read", async () => {
    const mine = await newIssue({ title: "Book the venue", assigneeUserId: member.userId });
    const theirs = await newIssue({ title: "Owner's own", assigneeUserId: owner.userId });
    const path = `/companies/${companyId}/issues/mine`;

    let page = await browse(member, path);
    expect(page.status).toBe(200);
    expect(itemText(page.html, mine)).toContain(`${mine.identifier} Book the venue`);
    // Handed to me by someone else: news until I open it.
    expect(itemText(page.html, mine)).toContain("Not opened by you yet");
    expect(itemText(page.html, mine)).toMatch(/^Unread .*assigned to you \d{4}-\d\d-\d\d/);
    expect(itemText(page.html, theirs)).toBe("");
    expect(page.html).toContain("data-mine-unread-count");

    expect((await browse(member, `/issues/${mine.id}`)).status).toBe(200);
    page = await browse(member, path);
    expect(itemText(page.html, mine)).not.toContain("Unread");
    expect(itemText(page.html, mine)).toContain("You last touched it");
    // An open is not an event of the issue: no activity row for it.
    const logged = await env.DB.prepare(
      "SELECT count(*) AS n FROM activity_log WHERE entity_id = ? AND action = 'issue.read_marked'",
    )
      .bind(mine.id)
      .first<{ n: number }>();
    expect(logged?.n).toBe(0);

    expect((await api("POST", `/api/issues/${mine.id}/comments`, { body: "Which date suits?" })).status).toBe(
      201,
    );
    page = await browse(member, path);
    expect(itemText(page.html, mine)).toMatch(/^Unread .*last comment by someone else \d{4}-\d\d-\d\d/);
    expect(textOf(page.html)).toContain("1 issue, 1 unread");
    expect(page.html).toContain(`aria-label="Mark read: ${mine.identifier}"`);

    const marked = await submit(member, `/issues/${mine.id}/read`, { back: path });
    expect(marked.status).toBe(303);
    expect(marked.location).toBe(path);
    page = await browse(member, path);
    expect(itemText(page.html, mine)).not.toContain("Unread");
    expect(itemText(page.html, mine)).toContain("You last touched it");
    expect(textOf(page.html)).toContain("1 issue, 0 unread");

    const everywhere = await browse(member, "/mine");
    expect(everywhere.status).toBe(200);
    expect(itemText(everywhere.html, mine)).toContain(`${mine.identifier} Book the venue`);
    expect(everywhere.html).toMatch(/<a href="\/mine"[^>]*>Mine/);
  });

  it("is a 404 for another company, and Mark read sends back only to a local page", async () => {
    expect((await browse(stranger, `/companies/${companyId}/issues/mine`)).status).toBe(404);
    const issue = await newIssue({ title: "Not the stranger's", assigneeUserId: member.userId });
    const refused = await submit(stranger, `/issues/${issue.id}/read`, { back: "/mine" });
    expect(refused.status).toBe(303);
    const readStates = await env.DB.prepare(
      "SELECT count(*) AS n FROM issue_read_states WHERE issue_id = ? AND user_id = ?",
    )
      .bind(issue.id, stranger.userId)
      .first<{ n: number }>();
    expect(readStates?.n).toBe(0);
    const offsite = await submit(member, `/issues/${issue.id}/read`, { back: "//evil.example/x" });
    expect(offsite.location).toBe("/mine");
  });

  it("is linked from the board, which documents its keyboard shortcuts", async () => {
    const board = await browse(member, `/companies/${companyId}/issues`);
    expect(board.html).toContain(`href="/companies/${companyId}/issues/mine"`);
    const text = textOf(board.html);
    expect(text).toContain("Keyboard");
    expect(text).toContain("Alt+Right Arrow, Alt+Left Arrow on a focused card moves it");
    expect(text).toContain("Escape closes the Edit menu without saving");
  });
});
