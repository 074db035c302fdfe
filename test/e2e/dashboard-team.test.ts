// The board for a team in a real browser (Debian's headless Chromium through playwright-core) against
// the real stack: the owner creates an invite link on the Members page; a second person, in a browser
// of their own, opens it signed out, signs in, joins, sees the company and comments on an issue; a
// viewer joins by a viewer link and finds no button that would change anything on the board or the
// issue page, and the API answers their session's write with 403. The owner uses the issue model on
// the issue page (a question, an attachment uploaded from disk, Cancel from the board, then Delete). And an
// agent's page shows a run's transcript: one real Claude Code CLI run against the fake Anthropic API
// (see test/support/agent-loop.ts), its conversation (assistant text, the tool call with its input,
// the tool result) read in the browser. axe-core checks every page shown; screenshots go to
// docs/screenshots/.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Agent,
  AgentLoop,
  API_LOOP,
  FIRST_RUN_DONE,
  type Issue,
  nextMove,
  suffix,
} from "../support/agent-loop.ts";
import { accessibilityProblems, type BrowserSession, openBrowser, screenshot } from "../support/browser.ts";
import {
  type FakeAnthropic,
  type MessagesRequest,
  type Reply,
  requestText,
  startFakeAnthropic,
  toolResults,
} from "../support/fake-models/anthropic.ts";

const ADMIN = { email: "admin@example.com", password: "change-me-locally" };
const UI_WAIT_MS = 30_000;
const VIEWER_REFUSAL = "Viewers of this company may read but not change anything";

let fake: FakeAnthropic;
let loop: AgentLoop;
let browser: BrowserSession;
let owner: Page;
let scribe: Agent;
let scribeIssue: Issue;
let teamIssue: { id: string; identifier: string };
let scratch: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  fake = await startFakeAnthropic((request: MessagesRequest): Reply => {
    const move = nextMove(requestText(request), toolResults(request).length > 0);
    if ("shell" in move) return { toolUse: { name: "Bash", input: { command: move.shell } } };
    return "text" in move ? move : { text: "Unexpected move" };
  });
  loop = await AgentLoop.start("claude", { ...fake, text: requestText });
  // The one CLI run starts now and works while the people below do their part.
  scribe = await loop.agent(`Scribe ${suffix()}`, "claude_local", {
    env: {
      ANTHROPIC_BASE_URL: fake.url,
      ANTHROPIC_API_KEY: "sk-ant-dummy",
      // This machine's runner runs as root: Claude skips permissions as root only in a sandbox.
      ...(process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {}),
    },
  });
  scribeIssue = await loop.todoIssue("Write the release notes");
  await loop.wake(scribeIssue.id, scribe.name);
  const created = await loop.board.call<{ id: string; identifier: string }>(
    "POST",
    `/api/companies/${loop.companyId}/issues`,
    { title: "Plan the launch party" },
  );
  teamIssue = created.body;
  browser = await openBrowser(loop.stack.baseUrl);
  owner = browser.page;
  owner.setDefaultTimeout(UI_WAIT_MS);
  scratch = mkdtempSync(path.join(tmpdir(), "dashboard-team-"));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await loop?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Every page shown is checked against WCAG 2.1 AA by axe-core; the last test fails on any problem. */
const problemsByPage = new Map<string, string[]>();
async function capture(page: Page, name: string): Promise<void> {
  await screenshot(page, name);
  const problems = await accessibilityProblems(page);
  if (problems.length > 0) problemsByPage.set(name, problems);
}

async function signIn(page: Page, credentials: { email: string; password: string }): Promise<void> {
  await page.getByLabel("E-mail").fill(credentials.email);
  await page.getByLabel("Password").fill(credentials.password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** A browser context of its own: no cookies, as on another person's machine. */
async function freshPage(): Promise<Page> {
  const context = await browser.browser.newContext({
    baseURL: loop.stack.baseUrl,
    viewport: { width: 1280, height: 860 },
  });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(UI_WAIT_MS);
  return page;
}

/** A person with an account of their own (the admin adds users), in a browser context of their own. */
async function newPerson(label: string): Promise<{ page: Page; email: string; password: string }> {
  const person = { email: `${label}-${suffix()}@example.test`, password: "a-long-enough-password" };
  const created = await loop.board.call("POST", "/api/users", { name: label, ...person, role: "OWNER" });
  expect([200, 201]).toContain(created.status);
  return { page: await freshPage(), ...person };
}

/** The owner creates a link on the Members page (for one e-mail, with a note, if given); the page shows it once. */
async function inviteLink(
  role: "member" | "viewer",
  bound?: { email: string; note: string },
): Promise<string> {
  await owner.goto(`/companies/${loop.companyId}/members`);
  await owner.getByLabel("Role", { exact: true }).selectOption(role);
  if (bound) {
    await owner.getByLabel("Their e-mail (optional)").fill(bound.email);
    await owner.getByLabel("Note (optional)").fill(bound.note);
  }
  await owner.getByRole("button", { name: "Create invite link" }).click();
  return owner.getByRole("textbox", { name: "Invite link" }).inputValue();
}

/** Opens the link signed out, takes "Sign in" on the invite's page, and comes back to join. */
async function joinBy(link: string, person: { page: Page; email: string; password: string }) {
  const { page } = person;
  await page.goto(new URL(link).pathname);
  await page.waitForURL("**/signup");
  await page.getByRole("link", { name: "Sign in" }).first().click();
  await page.waitForURL("**/login?next=**");
  await signIn(page, person);
  await page.waitForURL(`**${new URL(link).pathname}`);
  return page;
}

/** The POST forms on the page that are not Sign out: what would change something. */
const writingForms = (page: Page) => page.locator('form[method="post"]:not([action="/logout"])').count();

describe("a team on the board", () => {
  it("the owner invites by link; a second person joins, sees the company and comments", async () => {
    await owner.goto("/login");
    await signIn(owner, ADMIN);
    await owner.getByRole("heading", { name: "Overview" }).waitFor();

    const link = await inviteLink("member");
    expect(link).toMatch(/\/invites\/swm_/);
    await capture(owner, "members");

    const member = await newPerson("member");
    const page = await joinBy(link, member);
    const join = page.getByRole("button", { name: /^Join / });
    await join.waitFor();
    await capture(page, "invite");
    await join.click();
    await page.waitForURL(`**/companies/${loop.companyId}`);
    await page.getByRole("link", { name: "Issues", exact: true }).click();
    await page.getByRole("link", { name: "Plan the launch party" }).click();
    await page.locator("#field-body").fill("Count me in for the launch.");
    await page.getByRole("button", { name: "Add comment" }).click();
    await page.getByText("Comment added").waitFor();
    await page.locator("#issue-live ol.timeline").getByText("Count me in for the launch.").waitFor();

    const comments = await loop.board.call<Array<{ body: string; authorUserId: string | null }>>(
      "GET",
      `/api/issues/${teamIssue.id}/comments`,
    );
    expect(comments.body.map((comment) => comment.body)).toContain("Count me in for the launch.");
  });

  it("a new person signs up from an e-mailed invite link and lands in the company", async () => {
    const email = `newcomer-${suffix()}@example.test`;
    const link = await inviteLink("member", { email, note: "Runs the launch party" });
    // As if pasted from an e-mail: a browser with no account and no cookie.
    const page = await freshPage();
    await page.goto(link);
    await page.waitForURL("**/signup");
    await page.getByText("Note from the owner: Runs the launch party").waitFor();
    const address = page.getByLabel("E-mail");
    expect(await address.inputValue()).toBe(email);
    expect(await address.getAttribute("readonly")).not.toBeNull();
    await page.getByText("At least 8 characters").waitFor();
    await page.getByLabel("Your name").fill("Nia Newcomer");
    await page.getByLabel("Password").fill("a launch-party passphrase");
    await capture(page, "invite-signup");
    await page.getByRole("button", { name: /^Create account and join / }).click();
    await page.waitForURL(`**/companies/${loop.companyId}`);
    await page.getByText(/Welcome to /).waitFor();

    const members = await loop.board.call<{ members: Array<{ email: string; role: string; name: string }> }>(
      "GET",
      `/api/companies/${loop.companyId}/members`,
    );
    expect(members.body.members).toContainEqual(
      expect.objectContaining({ email, role: "member", name: "Nia Newcomer" }),
    );
    await owner.goto(`/companies/${loop.companyId}/members`);
    const row = owner.locator("tr", { hasText: "Runs the launch party" });
    await row.getByText(email).waitFor();
    await row.getByText("used", { exact: true }).waitFor();
    await owner.getByRole("heading", { name: "Account roles and company roles" }).waitFor();
    await capture(owner, "members-roles");
  });

  it("the owner asks, attaches a file and cancels from the board on the issue pages", async () => {
    await owner.goto(`/issues/${teamIssue.id}`);
    await owner.getByLabel("Question", { exact: true }).fill("Friday or Saturday?");
    await owner.getByRole("button", { name: "Ask" }).click();
    await owner.getByText("Question asked").waitFor();

    const file = path.join(scratch, "guest-list.csv");
    writeFileSync(file, "name,plus_one\nAda,yes\n");
    await owner.getByLabel("File", { exact: true }).setInputFiles(file);
    await owner.getByRole("button", { name: "Attach" }).click();
    await owner.getByText("Attached guest-list.csv", { exact: true }).waitFor();
    const download = owner.waitForEvent("download");
    await owner.getByRole("link", { name: "guest-list.csv" }).click();
    const saved = await (await download).path();
    expect(readFileSync(saved, "utf8")).toBe("name,plus_one\nAda,yes\n");
    await capture(owner, "issue-model");

    const doomed = await loop.board.call<{ id: string; identifier: string }>(
      "POST",
      `/api/companies/${loop.companyId}/issues`,
      { title: "Book the wrong venue" },
    );
    await owner.goto(`/companies/${loop.companyId}/issues`);
    owner.once("dialog", (dialog) => dialog.accept());
    // Cancel lives in the card's Edit menu (out of the way of a drag or a stray click).
    await owner.locator(`#card-${doomed.body.id} summary`).click();
    await owner.getByRole("button", { name: `Cancel ${doomed.body.identifier}` }).click();
    await owner.getByText(`Issue ${doomed.body.identifier} cancelled`).waitFor();
    await owner
      .locator('section[aria-labelledby="column-cancelled"]')
      .getByText("Book the wrong venue")
      .waitFor();

    // Then deleted from its page, past the confirm: back on the board, gone from it and from the API.
    await owner.getByRole("link", { name: "Book the wrong venue" }).click();
    // Delete, like Cancel, waits in the page's Actions menu.
    expect(await owner.getByRole("button", { name: `Delete ${doomed.body.identifier}` }).isVisible()).toBe(
      false,
    );
    await owner.getByText("Actions", { exact: true }).click();
    owner.once("dialog", (dialog) => dialog.accept());
    await owner.getByRole("button", { name: `Delete ${doomed.body.identifier}` }).click();
    await owner.getByText(`Issue ${doomed.body.identifier} deleted`).waitFor();
    expect(await owner.getByText("Book the wrong venue").count()).toBe(0);
    expect((await loop.board.call("GET", `/api/issues/${doomed.body.id}`)).status).toBe(404);
  });

  it("a viewer sees no buttons that change anything, and the API refuses their write", async () => {
    const viewer = await newPerson("viewer");
    const page = await joinBy(await inviteLink("viewer"), viewer);
    await page.getByRole("button", { name: /^Join / }).click();
    await page.waitForURL(`**/companies/${loop.companyId}`);

    await page.goto(`/companies/${loop.companyId}/issues`);
    await page.getByRole("heading", { name: "backlog" }).waitFor();
    expect(await writingForms(page)).toBe(0);
    expect(await page.getByRole("button", { name: /^Cancel / }).count()).toBe(0);
    await page.goto(`/issues/${teamIssue.id}`);
    await page.getByText("Friday or Saturday?").waitFor();
    expect(await writingForms(page)).toBe(0);
    for (const name of ["Add comment", "Save", "Ask", "Attach", "Save blockers"])
      expect(await page.getByRole("button", { name }).count(), name).toBe(0);
    expect(await page.locator("details.issue-actions").count()).toBe(0);
    await page.getByText("You are a viewer of this company").waitFor();
    await capture(page, "issue-viewer");

    const csrf = await page.locator('form[action="/logout"] input[name="_csrf"]').inputValue();
    const refused = await page.request.post(`/api/issues/${teamIssue.id}/comments`, {
      headers: { "X-CSRF-Token": csrf },
      data: { body: "A viewer's comment" },
    });
    expect(refused.status()).toBe(403);
    expect(((await refused.json()) as { error: string }).error).toBe(VIEWER_REFUSAL);
    const cancel = await page.request.patch(`/api/issues/${teamIssue.id}`, {
      headers: { "X-CSRF-Token": csrf },
      data: { status: "cancelled" },
    });
    expect(cancel.status()).toBe(403);
    const after = await loop.board.call<{ status: string }>("GET", `/api/issues/${teamIssue.id}`);
    expect(after.body.status).not.toBe("cancelled");
  });

  it("an agent's page shows its run's transcript: the assistant, the tool call and its result", async () => {
    const [run] = await loop.endedRuns(scribe.id, 1);
    expect(run?.status, run ? await loop.log(run.id) : "no run").toBe("succeeded");

    await owner.goto(`/agents/${scribe.id}`);
    await owner
      .getByRole("link", { name: /^Transcript/ })
      .first()
      .click();
    await owner.getByRole("heading", { name: `Run of ${scribe.name}` }).waitFor();
    const transcript = owner.locator("ol.transcript");
    const call = transcript.locator("li", { hasText: "Tool call Bash:" });
    // The CLI's tool input as it sent it: the Bash tool's JSON with the command the model chose.
    expect(JSON.parse((await call.locator("pre").textContent()) ?? "{}")).toEqual({ command: API_LOOP });
    const result = transcript.locator("li", { hasText: "Tool result:" });
    expect(await result.locator("pre").textContent()).toContain("API-LOOP-OK");
    await transcript.locator("li", { hasText: `Agent: ${FIRST_RUN_DONE}` }).waitFor();
    await capture(owner, "agent-run-transcript");
  });

  it("axe-core finds no problems on the members, invite, sign-up, issue and run pages", () => {
    expect(Object.fromEntries(problemsByPage)).toEqual({});
  });
});
