// The board a team works on (issue 30), in a real browser (Debian's Chromium through playwright-core)
// against the real stack: a member drags a card to another column and the API has it; a move the
// transition table forbids (todo → in progress, which only checkout makes) is refused with the reason
// on the card, which stays; the keyboard moves a focused card (Alt+Arrow keys, refusals shown the same
// way); the card's Edit
// menu sets a label and a due date without leaving the page, and the board's filters then find it by
// both; the owner's open board follows by push; an issue assigned to the member raises her Inbox count
// live and is listed in her inbox, and her comment shows her name on the owner's open issue page. axe finds nothing on the board; a screenshot of it
// goes to docs/screenshots/.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, clientFor } from "../support/api.ts";
import {
  accessibilityProblems,
  type BrowserSession,
  openBrowser,
  signedInPage as openSignedIn,
  screenshot,
} from "../support/browser.ts";
import { type Stack, startStack } from "../support/stack.ts";

const ADMIN = { email: "admin@example.com", password: "change-me-locally" };
const UI_WAIT_MS = 30_000;

let stack: Stack;
let api: ApiClient;
let browser: BrowserSession;
let companyId: string;
let labelId: string;
/** Shared by the keyboard test: Bea, and the issue the owner assigned to her. */
let beaCredentials: Credentials;
let venue: { id: string; identifier: string };

interface Credentials {
  email: string;
  password: string;
}

beforeAll(async () => {
  stack = await startStack({ env: { BRIDGE: "0", RUNNER: "0" } });
  api = await adminClient(stack.baseUrl);
  browser = await openBrowser(stack.baseUrl);
  const company = await api.call<{ id: string }>("POST", "/api/companies", { name: `Board ${Date.now()}` });
  expect(company.status).toBe(201);
  companyId = company.body.id;
  const label = await api.call<{ id: string }>("POST", `/api/companies/${companyId}/labels`, {
    name: "Launch",
  });
  labelId = label.body.id;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** A person other than the admin, a member of the company by invite. */
async function member(name: string): Promise<Credentials> {
  const person = {
    email: `${name.toLowerCase()}-${Date.now()}@example.test`,
    password: "a-long-enough-password",
  };
  expect([200, 201]).toContain(
    (await api.call("POST", "/api/users", { name, ...person, role: "OWNER" })).status,
  );
  const invite = await api.call<{ token: string }>("POST", `/api/companies/${companyId}/member-invites`, {
    role: "member",
  });
  const joined = await (await clientFor(stack.baseUrl, person)).call(
    "POST",
    `/api/member-invites/${invite.body.token}/accept`,
  );
  expect(joined.status, JSON.stringify(joined.body)).toBeLessThan(300);
  return person;
}

const signedInPage = (credentials: Credentials = ADMIN): Promise<Page> =>
  openSignedIn(browser, stack.baseUrl, credentials, { height: 900, timeoutMs: UI_WAIT_MS });

async function openBoard(page: Page, query = ""): Promise<void> {
  await page.goto(`/companies/${companyId}/issues${query}`);
  await page.locator('#issue-board[data-live-state="open"]').waitFor();
}

const card = (page: Page, id: string) => page.locator(`#card-${id}`);
const column = (page: Page, status: string) => page.locator(`#issue-board section[data-column="${status}"]`);
/** Presses Tab until the focused element matches `selector` (it must be reachable by Tab alone). */
async function tabTo(page: Page, selector: string, limit = 300): Promise<void> {
  for (let presses = 0; presses < limit; presses++) {
    await page.keyboard.press("Tab");
    if (await isFocused(page, selector)) return;
  }
  throw new Error(`Tab never reached ${selector}`);
}

const isFocused = (page: Page, selector: string) =>
  page.evaluate<boolean>(`Boolean(document.activeElement?.matches(${JSON.stringify(selector)}))`);
const focusedId = (page: Page) => page.evaluate<string>("document.activeElement?.id ?? ''");
const statusOf = async (id: string) =>
  (await api.call<{ status: string }>("GET", `/api/issues/${id}`)).body.status;

describe("a board you can work on", () => {
  it("drag, a refused move explained, the keyboard, quick edit and filters", async () => {
    const created = await api.call<{ id: string; identifier: string }>(
      "POST",
      `/api/companies/${companyId}/issues`,
      {
        title: "Book the venue",
      },
    );
    const issue = created.body;
    venue = issue;
    beaCredentials = await member("Bea");
    const bea = await signedInPage(beaCredentials);
    const owner = await signedInPage(ADMIN);
    await Promise.all([openBoard(bea), openBoard(owner)]);

    // Drag from backlog to todo: saved, and the owner's open board moves it by push.
    await bea.dragAndDrop(`#card-${issue.id}`, '#issue-board section[data-column="todo"]');
    await expect.poll(() => statusOf(issue.id)).toBe("todo");
    await expect.poll(() => column(owner, "todo").locator(`#card-${issue.id}`).count()).toBe(1);

    // todo → in progress is checkout's alone: refused with the reason, and the card stays in todo.
    await column(bea, "todo").locator(`#card-${issue.id}`).waitFor();
    await bea.dragAndDrop(`#card-${issue.id}`, '#issue-board section[data-column="in_progress"]');
    const refusal = card(bea, issue.id).locator("[data-move-error]");
    await expect.poll(() => refusal.textContent()).toContain("only through checkout");
    expect(await column(bea, "todo").locator(`#card-${issue.id}`).count()).toBe(1);
    expect(await statusOf(issue.id)).toBe("todo");

    // The keyboard: a focused card moves one column right with Alt+Right Arrow; left from todo is
    // refused by the table (todo never goes back to backlog), and the card says so.
    const second = await api.call<{ id: string }>("POST", `/api/companies/${companyId}/issues`, {
      title: "Order the cake",
    });
    await column(bea, "backlog").locator(`#card-${second.body.id}`).waitFor();
    await card(bea, second.body.id).focus();
    await bea.keyboard.press("Alt+ArrowRight");
    await expect.poll(() => statusOf(second.body.id)).toBe("todo");
    await card(bea, issue.id).focus();
    await bea.keyboard.press("Alt+ArrowLeft");
    await expect.poll(() => refusal.textContent()).toContain("Cannot move an issue from todo to backlog");
    expect(await statusOf(issue.id)).toBe("todo");

    // Quick edit: a label and a due date, saved in place (no navigation).
    await bea.evaluate('document.documentElement.dataset.e2eMark = "still-here"');
    const edited = card(bea, issue.id);
    await edited.getByText("Edit").click();
    await edited.getByLabel("Launch").check();
    await edited.getByLabel("Due date").fill("2026-12-24");
    await edited.getByRole("button", { name: "Save" }).click();
    await expect
      .poll(
        async () =>
          (await api.call<{ dueDate: string; labelIds: string[] }>("GET", `/api/issues/${issue.id}`)).body,
      )
      .toMatchObject({ dueDate: "2026-12-24", labelIds: [labelId] });
    expect(await bea.evaluate('document.documentElement.dataset.e2eMark === "still-here"')).toBe(true);

    // The filters find it by label and by due date; a later-due issue is not found by the date.
    await api.call("POST", `/api/companies/${companyId}/issues`, {
      title: "Next year",
      dueDate: "2027-06-01",
    });
    await openBoard(bea, `?labelId=${labelId}`);
    expect(await bea.locator("#issue-board .card").count()).toBe(1);
    await bea.goto(`/companies/${companyId}/issues`);
    await bea.getByLabel("Due by").fill("2026-12-31");
    await bea.getByRole("button", { name: "Filter" }).click();
    await bea.locator('#issue-board[data-live-state="open"]').waitFor();
    const titles = await bea.locator("#issue-board .card > a").allTextContents();
    expect(titles).toEqual(["Book the venue"]);

    // People: the owner assigns the issue to Bea; her open board's Inbox count rises by push, and her
    // inbox lists it. Her comment shows her name on the owner's open issue page, without a reload.
    await openBoard(bea);
    const beaId = (
      await api.call<{ members: Array<{ userId: string; name: string }> }>(
        "GET",
        `/api/companies/${companyId}/members`,
      )
    ).body.members.find((m) => m.name === "Bea")?.userId;
    const count = bea.locator("[data-unread-count]");
    expect(await count.isHidden()).toBe(true);
    expect((await api.call("PATCH", `/api/issues/${issue.id}`, { assigneeUserId: beaId })).status).toBe(200);
    await expect.poll(() => count.textContent()).toContain("1 unread");
    await owner.goto(`/issues/${issue.id}`);
    await owner.locator('#issue-live[data-live-state="open"]').waitFor();
    await owner.evaluate('document.documentElement.dataset.e2eMark = "still-here"');
    const beaApi = await clientFor(stack.baseUrl, beaCredentials);
    expect(
      (await beaApi.call("POST", `/api/issues/${issue.id}/comments`, { body: "Venue booked" })).status,
    ).toBe(201);
    await expect.poll(() => owner.locator("#issue-live").innerText()).toContain("Bea, ");
    expect(await owner.evaluate('document.documentElement.dataset.e2eMark === "still-here"')).toBe(true);
    await bea.goto("/notifications");
    expect(await bea.locator("main").innerText()).toContain(
      `assigned you ${issue.identifier} Book the venue`,
    );
    expect(await accessibilityProblems(bea)).toEqual([]);

    await openBoard(bea);
    expect(await accessibilityProblems(bea)).toEqual([]);
    await screenshot(bea, "issue-board");
    await Promise.all([bea.context().close(), owner.context().close()]);
  });

  it("Mine, and every board and inbox action by keyboard alone", async () => {
    // Someone else comments on Bea's issue after her own comment: unread for her.
    expect(
      (await api.call("POST", `/api/issues/${venue.id}/comments`, { body: "Deposit paid?" })).status,
    ).toBe(201);
    const menus = await api.call<{ id: string }>("POST", `/api/companies/${companyId}/issues`, {
      title: "Print the menus",
    });
    const printed = menus.body.id;
    const bea = await signedInPage(beaCredentials);
    await openBoard(bea);

    // The views and the filters come first in the Tab order, then each card and its Edit menu.
    await tabTo(bea, 'nav[aria-label="Issue views"] a[href$="/issues/mine"]');
    await tabTo(bea, "#filter-q");
    await tabTo(bea, `#card-${printed}`);
    await bea.keyboard.press("Alt+ArrowRight");
    await expect.poll(() => statusOf(printed)).toBe("todo");
    await expect.poll(() => focusedId(bea)).toBe(`card-${printed}`);

    // The Edit menu: open with Enter, change the priority with an arrow key, Enter on Save. Focus comes
    // back to the card; Escape closes a reopened menu unsaved, focus on its summary.
    await tabTo(bea, `#card-${printed} summary`);
    await bea.keyboard.press("Enter");
    await tabTo(bea, `#qe-board-${printed}-priority`);
    await bea.keyboard.press("ArrowDown");
    await tabTo(bea, `#card-${printed} form[data-quick-edit] button[type="submit"]`);
    await bea.keyboard.press("Enter");
    await expect
      .poll(async () => (await api.call<{ priority: string }>("GET", `/api/issues/${printed}`)).body.priority)
      .toBe("low");
    await expect.poll(() => focusedId(bea)).toBe(`card-${printed}`);
    await tabTo(bea, `#card-${printed} summary`);
    await bea.keyboard.press("Enter");
    expect(await bea.locator(`#card-${printed} details[open]`).count()).toBe(1);
    await bea.keyboard.press("Escape");
    expect(await bea.locator(`#card-${printed} details[open]`).count()).toBe(0);
    expect(await isFocused(bea, `#card-${printed} summary`)).toBe(true);

    // The Mine tab by keyboard: her issue, unread (the owner's comment); axe finds nothing; Mark read.
    await openBoard(bea);
    await tabTo(bea, 'nav[aria-label="Issue views"] a[href$="/issues/mine"]');
    await bea.keyboard.press("Enter");
    await bea.locator('#issue-mine[data-live-state="open"]').waitFor();
    const item = bea.locator(`[data-mine-issue="${venue.id}"]`);
    expect(await item.innerText()).toMatch(/^Unread\s/);
    expect(await item.innerText()).toContain(`${venue.identifier} Book the venue`);
    expect(await item.innerText()).toContain("last comment by someone else");
    expect(await bea.locator("[data-mine-issue]").count()).toBe(1);
    expect(await accessibilityProblems(bea)).toEqual([]);
    await screenshot(bea, "issue-mine");
    await tabTo(bea, `button[aria-label="Mark read: ${venue.identifier}"]`);
    await bea.keyboard.press("Enter");
    await bea.getByRole("status").filter({ hasText: "Marked read" }).waitFor();
    expect(await item.innerText()).not.toContain("Unread");

    // The header's Inbox by keyboard: the assignment is marked read with keys alone.
    await tabTo(bea, 'header a[href="/notifications"]');
    await bea.keyboard.press("Enter");
    await bea.getByRole("heading", { name: /^Inbox/ }).waitFor();
    expect(await accessibilityProblems(bea)).toEqual([]);
    await tabTo(bea, `button[aria-label="Mark read: ${venue.identifier}"]`);
    await bea.keyboard.press("Enter");
    await bea.getByRole("status").filter({ hasText: "Marked read" }).waitFor();
    const beaApi = await clientFor(stack.baseUrl, beaCredentials);
    expect((await beaApi.call<{ unreadCount: number }>("GET", "/api/notifications")).body.unreadCount).toBe(
      0,
    );

    // The header's Mine: her issues in every company.
    await tabTo(bea, 'header a[href="/mine"]');
    await bea.keyboard.press("Enter");
    await bea.getByRole("heading", { name: "Mine" }).waitFor();
    expect(await bea.locator(`[data-mine-issue="${venue.id}"]`).innerText()).toContain(venue.identifier);
    expect(await accessibilityProblems(bea)).toEqual([]);
    await bea.context().close();
  });
});
