// The issue model on the issue page in workerd, through the dashboard URLs: blockers (links with their
// status, edited by identifier), questions (ask, answer once), attachments (upload with the API's
// size and type errors next to the field, download with the same permissions) and Cancel from the
// issue page and the board. Each form: success, bad input next to its field, another tenant's 404,
// and a viewer who sees none of the forms and whose forged posts the API refuses.
import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, BASE, call, createUser, type Session } from "../helpers";
import { browse, fieldError, type PageResponse, submit, submitMultipart, textOf, undrawn } from "./helpers";

interface Issue {
  id: string;
  identifier: string;
  status: string;
  blockedByIssueIds: string[];
}

let owner: Session;
let viewer: Session;
let stranger: Session;
let companyId: string;
let strangerIssue: Issue;

async function createIssue(as: Session, company: string, title: string): Promise<Issue> {
  const res = await call<Issue>("POST", `/api/companies/${company}/issues`, {
    headers: asSession(as),
    body: { title },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function issueNow(id: string): Promise<Issue> {
  return (await call<Issue>("GET", `/api/issues/${id}`, { headers: asSession(owner) })).body;
}

async function createCompany(as: Session, name: string): Promise<string> {
  const res = await call<{ id: string }>("POST", "/api/companies", {
    headers: asSession(as),
    body: { name },
  });
  return res.body.id;
}

beforeAll(async () => {
  owner = await createUser("OWNER");
  stranger = await createUser("OWNER");
  viewer = await createUser("OWNER");
  companyId = await createCompany(owner, `Model Co ${crypto.randomUUID().slice(0, 6)}`);
  const invite = await call<{ token: string }>("POST", `/api/companies/${companyId}/member-invites`, {
    headers: asSession(owner),
    body: { role: "viewer" },
  });
  const joined = await call("POST", `/api/member-invites/${invite.body.token}/accept`, {
    headers: asSession(viewer),
  });
  expect(joined.status, JSON.stringify(joined.body)).toBeLessThan(300);
  const strangerCompany = await createCompany(stranger, `Other Co ${crypto.randomUUID().slice(0, 6)}`);
  strangerIssue = await createIssue(stranger, strangerCompany, "Not yours");
});

/** Posts a multipart form as a browser does (the CSRF token as a field beside the file). */
function upload(session: Session, issueId: string, file: File | null): Promise<PageResponse> {
  return submitMultipart(session, `/issues/${issueId}/attachments`, {
    file: file ?? new File([], "", { type: "application/octet-stream" }),
  });
}

const flashOf = (page: PageResponse) => decodeURIComponent(page.headers.get("set-cookie") ?? "");

describe("blockers", () => {
  it("are set by identifier, shown as links with their status, and cleared", async () => {
    const issue = await createIssue(owner, companyId, "Ship the release");
    const first = await createIssue(owner, companyId, "Write the notes");
    const second = await createIssue(owner, companyId, "Fix the build");
    const saved = await submit(owner, `/issues/${issue.id}/blockers`, {
      blockedByIssueIds: `${first.identifier}, ${second.identifier.toLowerCase()}`,
    });
    expect(saved.status, textOf(saved.html)).toBe(303);
    expect(flashOf(saved)).toContain("Blocked by 2 issues");
    expect((await issueNow(issue.id)).blockedByIssueIds.sort()).toEqual([first.id, second.id].sort());

    const page = await browse(owner, `/issues/${issue.id}`);
    const section =
      page.html.match(/<section class="panel" aria-labelledby="issue-blockers">[\s\S]*?<\/section>/)?.[0] ??
      "";
    expect(section).toContain(`href="/issues/${first.id}"`);
    expect(textOf(section)).toContain(`${first.identifier} Write the notes backlog`);
    expect(section).toContain(`value="${first.identifier}, ${second.identifier}"`);

    const cleared = await submit(owner, `/issues/${issue.id}/blockers`, { blockedByIssueIds: " " });
    expect(cleared.status).toBe(303);
    expect((await issueNow(issue.id)).blockedByIssueIds).toEqual([]);
  });

  it("refuses an unknown issue, another tenant's issue and the issue itself, next to the field", async () => {
    const issue = await createIssue(owner, companyId, "Lonely");
    const unknown = await submit(owner, `/issues/${issue.id}/blockers`, { blockedByIssueIds: "NOPE-999" });
    expect(unknown.status).toBe(422);
    expect(fieldError(unknown.html, "blockedByIssueIds")).toBe("No such issue in this company: NOPE-999");
    expect(unknown.html).toContain('value="NOPE-999"');

    const foreign = await submit(owner, `/issues/${issue.id}/blockers`, {
      blockedByIssueIds: strangerIssue.identifier,
    });
    expect(foreign.status).toBe(422);
    expect(fieldError(foreign.html, "blockedByIssueIds")).toContain(strangerIssue.identifier);

    const itself = await submit(owner, `/issues/${issue.id}/blockers`, {
      blockedByIssueIds: issue.identifier,
    });
    expect(itself.status).toBe(422);
    expect(fieldError(itself.html, "blockedByIssueIds")).toBe("an issue cannot block itself");
    expect((await issueNow(issue.id)).blockedByIssueIds).toEqual([]);
  });
});

describe("questions", () => {
  it("are asked, listed as pending with an answer form, answered once", async () => {
    const issue = await createIssue(owner, companyId, "Pick a colour");
    const asked = await submit(owner, `/issues/${issue.id}/questions`, { question: "Blue or green?" });
    expect(asked.status, textOf(asked.html)).toBe(303);
    const pending = await browse(owner, `/issues/${issue.id}`);
    expect(textOf(pending.html)).toContain("pending Y You asked");
    const action = pending.html.match(/action="(\/issues\/[^"]+\/questions\/[^"]+\/answer)"/)?.[1] ?? "";
    expect(action).not.toBe("");
    const questionId = action.split("/")[4] ?? "";

    const blank = await submit(owner, action, { answer: "" });
    expect(blank.status).toBe(400);
    expect(fieldError(blank.html, `answer-${questionId}`)).toBeTruthy();

    const answered = await submit(owner, action, { answer: "Green" });
    expect(answered.status).toBe(303);
    const page = textOf((await browse(owner, `/issues/${issue.id}`)).html);
    expect(page).toContain("answered Y You asked");
    expect(page).toContain("Y You answered: Green");

    const again = await submit(owner, action, { answer: "Blue" });
    expect(again.status).toBe(409);
    expect(again.html).toMatch(/<p class="alert" role="alert">[^<]*answered/);
  });

  it("shows an empty question's message next to the field and asks nothing", async () => {
    const issue = await createIssue(owner, companyId, "Quiet");
    const blank = await submit(owner, `/issues/${issue.id}/questions`, { question: "" });
    expect(blank.status).toBe(400);
    expect(fieldError(blank.html, "question")).toBeTruthy();
    const listed = await call<unknown[]>("GET", `/api/issues/${issue.id}/questions`, {
      headers: asSession(owner),
    });
    expect(listed.body).toEqual([]);
  });
});

describe("attachments", () => {
  it("are uploaded, listed with type and size, and downloaded through the dashboard", async () => {
    const issue = await createIssue(owner, companyId, "Read the spec");
    const file = new File(["# Spec\nAll of it.\n"], "spec.md", { type: "text/markdown" });
    const stored = await upload(owner, issue.id, file);
    expect(stored.status, textOf(stored.html)).toBe(303);
    expect(flashOf(stored)).toContain("Attached spec.md");

    const page = await browse(owner, `/issues/${issue.id}`);
    const link = page.html.match(/href="(\/issues\/[^"]+\/attachments\/[^"]+)">spec\.md</)?.[1] ?? "";
    expect(link).not.toBe("");
    expect(textOf(page.html)).toContain("spec.md text/markdown 18 B");

    const download = await SELF.fetch(`${BASE}${link}`, { headers: { cookie: owner.cookie } });
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("text/markdown");
    expect(download.headers.get("content-disposition")).toContain("attachment; filename*=UTF-8''spec.md");
    expect(await download.text()).toBe("# Spec\nAll of it.\n");

    const asViewer = await SELF.fetch(`${BASE}${link}`, { headers: { cookie: viewer.cookie } });
    expect(asViewer.status).toBe(200);
    const asStranger = await SELF.fetch(`${BASE}${link}`, { headers: { cookie: stranger.cookie } });
    expect(asStranger.status).toBe(404);
    expect(await asStranger.text()).not.toContain("All of it");
  });

  it("shows the API's type, content, size and missing-file errors next to the field", async () => {
    const issue = await createIssue(owner, companyId, "No junk");
    const zip = await upload(owner, issue.id, new File(["PK"], "a.zip", { type: "application/zip" }));
    expect(zip.status).toBe(415);
    expect(fieldError(zip.html, "file")).toContain("file type application/zip is not allowed");

    const lying = await upload(owner, issue.id, new File(["not a png"], "a.png", { type: "image/png" }));
    expect(lying.status).toBe(400);
    expect(fieldError(lying.html, "file")).toContain("declared as image/png");

    const big = new File([new Uint8Array(10 * 1024 * 1024 + 1).fill(65)], "big.txt", { type: "text/plain" });
    const tooBig = await upload(owner, issue.id, big);
    expect(tooBig.status).toBe(413);
    expect(fieldError(tooBig.html, "file")).toContain("exceeds");

    const none = await upload(owner, issue.id, null);
    expect(none.status).toBe(400);
    expect(fieldError(none.html, "file")).toBe("file is required");
    const listed = await call<unknown[]>("GET", `/api/issues/${issue.id}/attachments`, {
      headers: asSession(owner),
    });
    expect(listed.body).toEqual([]);
  });
});

describe("cancel", () => {
  it("cancels from the issue page and from the board", async () => {
    const onPage = await createIssue(owner, companyId, "Drop this");
    const cancelled = await submit(owner, `/issues/${onPage.id}/cancel`);
    expect(cancelled.status).toBe(303);
    expect(cancelled.location).toBe(`/issues/${onPage.id}`);
    expect((await issueNow(onPage.id)).status).toBe("cancelled");
    expect((await browse(owner, `/issues/${onPage.id}`)).html).not.toContain(`/issues/${onPage.id}/cancel`);

    const onBoard = await createIssue(owner, companyId, "Drop that too");
    const board = await browse(owner, `/companies/${companyId}/issues`);
    expect(board.html).toContain(`action="/issues/${onBoard.id}/cancel"`);
    const fromBoard = await submit(owner, `/issues/${onBoard.id}/cancel`, { back: "board" });
    expect(fromBoard.status).toBe(303);
    expect(fromBoard.location).toBe(`/companies/${companyId}/issues`);
    expect((await issueNow(onBoard.id)).status).toBe("cancelled");
  });
});

describe("another tenant's issue", () => {
  it("answers 404 to every form and changes nothing", async () => {
    const id = strangerIssue.id;
    const paths: Array<[string, Record<string, string>]> = [
      [`/issues/${id}/blockers`, { blockedByIssueIds: "" }],
      [`/issues/${id}/questions`, { question: "Hello?" }],
      [`/issues/${id}/questions/q-1/answer`, { answer: "Hi" }],
      [`/issues/${id}/cancel`, {}],
    ];
    for (const [path, fields] of paths) expect((await submit(owner, path, fields)).status, path).toBe(404);
    const file = new File(["hi"], "hi.txt", { type: "text/plain" });
    expect((await upload(owner, id, file)).status).toBe(404);
    const rows = await env.DB.prepare(
      "SELECT (SELECT count(*) FROM issue_questions WHERE issue_id = ?1) + (SELECT count(*) FROM issue_attachments WHERE issue_id = ?1) AS n",
    )
      .bind(id)
      .first<{ n: number }>();
    expect(rows?.n).toBe(0);
    const after = await call<Issue>("GET", `/api/issues/${id}`, { headers: asSession(stranger) });
    expect(after.body.status).toBe("backlog");
  });
});

describe("a viewer", () => {
  it("sees blockers, questions and attachments but none of their forms, and forged posts get 403", async () => {
    const issue = await createIssue(owner, companyId, "Watched");
    await submit(owner, `/issues/${issue.id}/questions`, { question: "Anyone?" });
    const page = await browse(viewer, `/issues/${issue.id}`);
    expect(page.status).toBe(200);
    for (const label of ["Blockers", "Ask a question", "Answer the question", "Attach a file"])
      expect(page.html).not.toContain(`aria-label="${label}"`);
    expect(page.html).not.toContain("/cancel");
    expect(textOf(page.html)).toContain("Anyone?");
    const board = await browse(viewer, `/companies/${companyId}/issues`);
    expect(board.html).not.toContain("/cancel");

    expect((await submit(viewer, `/issues/${issue.id}/cancel`)).status).toBe(403);
    expect((await submit(viewer, `/issues/${issue.id}/questions`, { question: "sneaky" })).status).toBe(403);
    const file = new File(["hi"], "hi.txt", { type: "text/plain" });
    expect((await upload(viewer, issue.id, file)).status).toBe(403);
    expect((await issueNow(issue.id)).status).toBe("backlog");
  });
});

/** The inner HTML of the `<div id="…">` region, its nested divs included. */
function regionOf(html: string, id: string): string {
  const start = html.indexOf(`<div id="${id}"`);
  expect(start, id).toBeGreaterThan(-1);
  const tags = /<div\b|<\/div>/g;
  tags.lastIndex = start;
  let depth = 0;
  for (let tag = tags.exec(html); tag; tag = tags.exec(html)) {
    depth += tag[0] === "</div>" ? -1 : 1;
    if (depth === 0) return html.slice(start, tag.index);
  }
  throw new Error(`unclosed region ${id}`);
}

describe("live sections", () => {
  it("blockers, questions and attachments are regions on the issue's feed; the typing forms stay outside", async () => {
    const issue = await createIssue(owner, companyId, "Live sections");
    const headers = asSession(owner);
    const asked = await call("POST", `/api/issues/${issue.id}/questions`, {
      headers,
      body: { body: "Why?" },
    });
    expect(asked.status).toBe(201);
    const form = new FormData();
    form.append("file", new File(["plan\n"], "plan.md", { type: "text/markdown" }));
    const attached = await call("POST", `/api/issues/${issue.id}/attachments`, { headers, rawBody: form });
    expect(attached.status).toBe(201);
    // What the script fetches when the feed announces a change.
    const response = await SELF.fetch(`${BASE}/issues/${issue.id}`, {
      headers: { cookie: owner.cookie, "X-Dashboard-Live": "1" },
    });
    const html = await response.text();
    const feed = `/api/issues/${issue.id}/events`;
    for (const id of ["issue-live", "issue-blockers-live", "issue-questions-live", "issue-attachments-live"])
      expect(undrawn(html)).toContain(`<div id="${id}" data-live="30" data-live-feed="${feed}">`);
    const questions = regionOf(html, "issue-questions-live");
    expect(textOf(questions)).toContain("Why?");
    expect(questions).toContain('aria-label="Answer the question"');
    expect(questions).not.toContain('aria-label="Ask a question"');
    const attachments = regionOf(html, "issue-attachments-live");
    expect(textOf(attachments)).toContain("plan.md text/markdown 5 B");
    expect(attachments).not.toContain('aria-label="Attach a file"');
    expect(regionOf(html, "issue-blockers-live")).not.toContain('aria-label="Blockers"');
    expect(html).toContain('aria-label="Ask a question"');
  });
});
