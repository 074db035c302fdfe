// Live pages in a real browser (Debian's Chromium through playwright-core) against the real local
// stack (`npm start`): two people (the admin and a member of the company) with the same issue open see
// each other's comment and status change within 2 s, without reloading; a page whose socket dropped
// catches up on what changed meanwhile once it reconnects, as does one whose first socket never said
// hello or said it after a change the page was drawn without; a run woken for no issue is followed on its
// page by push; the board moves a card when its issue changes; the board's columns and card titles
// fit a 1280 px window, while a phone still gets one column under another; and a member's open board
// redraws when their role is lowered and says so, controls off, when they are removed.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, clientFor } from "../support/api.ts";
import { type BrowserSession, openBrowser, signedInPage as openSignedIn } from "../support/browser.ts";
import { type Stack, startStack } from "../support/stack.ts";

const ADMIN = { email: "admin@example.com", password: "change-me-locally" };
/** What the issue asks: the other browser shows the change within this long. */
const LIVE_WITHIN_MS = 2_000;
const UI_WAIT_MS = 30_000;
const STATUSES = ["backlog", "todo", "in progress", "in review", "blocked", "done", "cancelled"];

let stack: Stack;
let api: ApiClient;
let browser: BrowserSession;
let companyId: string;

beforeAll(async () => {
  stack = await startStack();
  api = await adminClient(stack.baseUrl);
  browser = await openBrowser(stack.baseUrl);
  const company = await api.call<{ id: string }>("POST", "/api/companies", {
    name: `Live ${Date.now()}`,
    requireBoardApprovalForNewAgents: false,
  });
  expect(company.status).toBe(201);
  companyId = company.body.id;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

interface Credentials {
  email: string;
  password: string;
}

/** Someone other than the admin, a member of the company: added by the admin, joined by an invite. */
async function companyMember(label: string): Promise<Credentials> {
  const person = { email: `${label}-${Date.now()}@example.test`, password: "a-long-enough-password" };
  const created = await api.call("POST", "/api/users", { name: label, ...person, role: "OWNER" });
  expect([200, 201]).toContain(created.status);
  const invite = await api.call<{ token: string }>("POST", `/api/companies/${companyId}/member-invites`, {
    role: "member",
  });
  expect(invite.status).toBe(201);
  const joined = await (await clientFor(stack.baseUrl, person)).call(
    "POST",
    `/api/member-invites/${invite.body.token}/accept`,
  );
  expect(joined.status, JSON.stringify(joined.body)).toBeLessThan(300);
  return person;
}

/**
 * Lets a test drop a page's live sockets and keep them down: `__e2eSockets.drop()` closes every socket
 * and sends reconnects to a path the API refuses (the script backs off and retries), `allow()` lets the
 * next retry through. `urls` lists each socket the page asked for.
 */
const SOCKET_CONTROL = `(() => {
  const Native = window.WebSocket;
  const control = { sockets: [], urls: [], blocked: false };
  control.drop = () => {
    control.blocked = true;
    for (const socket of control.sockets) socket.close();
  };
  control.allow = () => {
    control.blocked = false;
  };
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      const wanted = String(url);
      super(control.blocked ? wanted.replace("/events", "/events-refused-by-the-test") : wanted, protocols);
      control.urls.push(wanted);
      control.sockets.push(this);
      if (control.dropFirstOnOpen) {
        control.dropFirstOnOpen = false;
        this.addEventListener("open", () => control.drop()); // before the page hears a frame
      }
    }
  };
  control.dropFirstOnOpen = sessionStorage.getItem("e2e-drop-first-on-open") === "1";
  window.__e2eSockets = control;
})();`;

const signedInPage = (credentials: Credentials = ADMIN): Promise<Page> =>
  openSignedIn(browser, stack.baseUrl, credentials, { height: 860, timeoutMs: UI_WAIT_MS });

async function createIssue(title: string): Promise<{ id: string; identifier: string }> {
  const created = await api.call<{ id: string; identifier: string }>(
    "POST",
    `/api/companies/${companyId}/issues`,
    { title },
  );
  expect(created.status).toBe(201);
  return created.body;
}

/** Opens a live page and waits until its socket is open (changes before that are the page's own). */
async function openLive(page: Page, path: string, regionId: string): Promise<void> {
  await page.goto(path);
  await page.locator(`#${regionId}[data-live-state="open"]`).waitFor();
  await page.evaluate('document.documentElement.dataset.e2eMark = "still-here"');
}

const notReloaded = (page: Page) =>
  page.evaluate<boolean>('document.documentElement.dataset.e2eMark === "still-here"');

/** The issue page's region comes to show `note` once its socket is open, by push (never a reload). */
async function expectPushed(page: Page, note: string): Promise<void> {
  await page.locator('#issue-live[data-live-state="open"]').waitFor();
  await expect.poll(() => textOf(page, "#issue-live"), { interval: 50 }).toContain(note);
  expect(await notReloaded(page)).toBe(true);
  await page.context().close();
}

interface BoardLayout {
  scrollWidth: number;
  clientWidth: number;
  innerWidth: number;
  columns: Array<{ title: string; left: number; right: number }>;
  cards: Array<{ text: string; scrollWidth: number; clientWidth: number }>;
}

interface PhoneLayout {
  board: number;
  sections: Array<{ top: number; width: number }>;
  scrollWidth: number;
}

const textOf = (page: Page, selector: string) => page.locator(selector).innerText();

describe("live dashboard pages", () => {
  it("two people on one issue see each other's comment and status change within 2 s, no reload", async () => {
    const issue = await createIssue("Two people, one issue");
    const alice = await signedInPage();
    const bob = await signedInPage(await companyMember("bob"));
    await openLive(alice, `/issues/${issue.id}`, "issue-live");
    await openLive(bob, `/issues/${issue.id}`, "issue-live");
    expect(await textOf(bob, "#issue-status")).toContain("backlog");

    const note = `Alice was here ${Date.now()}`;
    await alice.locator('textarea[name="body"]').fill(note);
    await alice.getByRole("button", { name: "Add comment" }).click();
    await expect
      .poll(() => textOf(bob, "#issue-live"), { timeout: LIVE_WITHIN_MS, interval: 50 })
      .toContain(note);
    expect(await notReloaded(bob)).toBe(true);

    // Bob answers by moving the issue; Alice's page (reloaded by her own form post) follows.
    await alice.getByText("Comment added").waitFor();
    await alice.locator('#issue-live[data-live-state="open"]').waitFor();
    await alice.evaluate('document.documentElement.dataset.e2eMark = "still-here"');
    // The properties panel is the page's one status control; its script saves it in place.
    const properties = bob.locator('section[aria-labelledby="issue-properties"]');
    await properties.locator('select[name="status"]').selectOption("todo");
    await properties.getByRole("button", { name: "Save", exact: true }).click();
    await expect
      .poll(() => textOf(alice, "#issue-status"), { timeout: LIVE_WITHIN_MS, interval: 50 })
      .toContain("todo");
    // Her properties panel, the status control, follows too: no stale "backlog" left to save.
    const aliceStatus = alice.locator('section[aria-labelledby="issue-properties"] select[name="status"]');
    await expect.poll(() => aliceStatus.inputValue(), { interval: 50 }).toBe("todo");
    expect(await notReloaded(alice)).toBe(true);
    await properties.getByRole("status").getByText(`${issue.identifier} saved`).waitFor();
    await expect.poll(() => textOf(bob, "#issue-status"), { interval: 50 }).toContain("todo");
    // Bob's saved panel counts as sent: once he looks elsewhere it follows a change made by others.
    await bob.locator("#issue-timeline").click();
    expect((await api.call("PATCH", `/api/issues/${issue.id}`, { priority: "high" })).status).toBe(200);
    const bobPriority = properties.locator('select[name="priority"]');
    await expect.poll(() => bobPriority.inputValue(), { interval: 50 }).toBe("high");
    expect(await notReloaded(bob)).toBe(true);
    await Promise.all([alice.context().close(), bob.context().close()]);
  });

  it("a page whose socket dropped catches up on what changed meanwhile, without a reload", async () => {
    const issue = await createIssue("Dropped and back");
    const page = await signedInPage();
    await page.addInitScript(SOCKET_CONTROL);
    await openLive(page, `/issues/${issue.id}`, "issue-live");
    await page.evaluate("window.__e2eSockets.drop()");
    await page.locator('#issue-live[data-live-state="closed"]').waitFor();

    const note = `Written while the page was away ${Date.now()}`;
    const commented = await api.call("POST", `/api/issues/${issue.id}/comments`, { body: note });
    expect(commented.status).toBe(201);
    const moved = await api.call("PATCH", `/api/issues/${issue.id}`, { status: "todo" });
    expect(moved.status).toBe(200);
    expect(await textOf(page, "#issue-live")).not.toContain(note);

    await page.evaluate("window.__e2eSockets.allow()");
    await page.locator('#issue-live[data-live-state="open"]').waitFor();
    await expect.poll(() => textOf(page, "#issue-live"), { timeout: 20_000, interval: 50 }).toContain(note);
    expect(await textOf(page, "#issue-status")).toContain("todo");
    expect(await notReloaded(page)).toBe(true);
    // It asked for what it missed rather than starting over.
    const urls = await page.evaluate<string[]>("window.__e2eSockets.urls");
    expect(urls.at(-1)).toMatch(/[?&]since=\d+/);
    await page.context().close();
  });

  it("a page whose first socket dropped before its hello still catches up once connected", async () => {
    const issue = await createIssue("Dropped at once");
    const page = await signedInPage();
    await page.evaluate('sessionStorage.setItem("e2e-drop-first-on-open", "1")');
    await page.addInitScript(SOCKET_CONTROL);
    await page.goto(`/issues/${issue.id}`);
    await page.evaluate('document.documentElement.dataset.e2eMark = "still-here"');
    await page.locator('#issue-live[data-live-state="closed"]').waitFor();
    expect((await page.evaluate<string[]>("window.__e2eSockets.urls"))[0]).not.toMatch(/since=/);

    const note = `Written before the page ever heard its feed ${Date.now()}`;
    const commented = await api.call("POST", `/api/issues/${issue.id}/comments`, { body: note });
    expect(commented.status).toBe(201);
    expect(await textOf(page, "#issue-live")).not.toContain(note);

    await page.evaluate("window.__e2eSockets.allow()");
    await expectPushed(page, note);
  });

  it("a change made after the page was drawn but before its socket's hello still reaches it", async () => {
    const issue = await createIssue("Changed while on its way");
    const page = await signedInPage();
    const note = `Written while the page was on its way ${Date.now()}`;
    let first = true;
    // The page's socket reaches the feed only after the comment: the hello's seq already counts it.
    await page.routeWebSocket(/\/api\/issues\/[^/]+\/events/, async (socket) => {
      if (first) {
        first = false;
        const commented = await api.call("POST", `/api/issues/${issue.id}/comments`, { body: note });
        expect(commented.status).toBe(201);
      }
      socket.connectToServer();
    });
    await openLive(page, `/issues/${issue.id}`, "issue-live");
    await expectPushed(page, note);
  });

  it("a run woken for no issue: its page follows the run to its end by push", async () => {
    const hired = await api.call<{ agent: { id: string } }>(
      "POST",
      `/api/companies/${companyId}/agent-hires`,
      {
        name: "Solo",
        role: "engineer",
        adapterType: "process",
        adapterConfig: {
          command: "node",
          args: ["-e", "setTimeout(() => console.log('finished alone'), 6000)"],
        },
      },
    );
    expect(hired.status, JSON.stringify(hired.body)).toBe(201);
    const invoked = await api.call<{ id: string }>(
      "POST",
      `/api/agents/${hired.body.agent.id}/heartbeat/invoke`,
    );
    expect(invoked.status, JSON.stringify(invoked.body)).toBe(202);
    const page = await signedInPage();
    await openLive(page, `/runs/${invoked.body.id}`, "run-live");
    expect(await textOf(page, "#run-live")).not.toContain("finished alone");

    await expect
      .poll(() => textOf(page, "#run-live"), { timeout: 60_000, interval: 100 })
      .toContain("finished alone");
    await expect.poll(() => textOf(page, "#run-live"), { timeout: 20_000 }).toContain("succeeded");
    expect(await notReloaded(page)).toBe(true);
    await page.context().close();
  });

  it("the board moves a card when its issue changes elsewhere, and fits its columns in 1280 px", async () => {
    const long = `An-issue-title-with-no-spaces-at-all-${"x".repeat(80)}`;
    const wrapped = await createIssue(long);
    const moving = await createIssue("Moves while the board is open");
    const page = await signedInPage();
    await openLive(page, `/companies/${companyId}/issues`, "issue-board");
    const todo = page.locator("section", { has: page.locator("#column-todo") });
    expect(await todo.getByText(moving.identifier).count()).toBe(0);

    const patched = await api.call("PATCH", `/api/issues/${moving.id}`, { status: "todo" });
    expect(patched.status).toBe(200);
    await expect
      .poll(() => todo.getByText(moving.identifier).count(), { timeout: LIVE_WITHIN_MS, interval: 50 })
      .toBe(1);
    const created = await createIssue("Created while the board is open");
    const backlog = page.locator("section", { has: page.locator("#column-backlog") });
    await expect
      .poll(() => backlog.getByText(created.identifier).count(), { timeout: LIVE_WITHIN_MS, interval: 50 })
      .toBe(1);
    expect(await notReloaded(page)).toBe(true);

    // Every column is in the window without scrolling, and no card is wider than its column.
    const layout = await page.evaluate<BoardLayout>(`(() => {
      const board = document.getElementById("issue-board");
      const columns = Array.from(board.querySelectorAll(":scope > section")).map((section) => {
        const box = section.getBoundingClientRect();
        return { title: section.querySelector("h2").textContent, left: box.left, right: box.right };
      });
      const cards = Array.from(board.querySelectorAll(".card")).map((card) => ({
        text: card.textContent,
        scrollWidth: card.scrollWidth,
        clientWidth: card.clientWidth,
      }));
      return {
        scrollWidth: board.scrollWidth,
        clientWidth: board.clientWidth,
        innerWidth: window.innerWidth,
        columns,
        cards,
      };
    })()`);
    expect(layout.innerWidth).toBe(1280);
    expect(layout.columns.map((c) => c.title.replace(/\s*\(\d+\)$/, ""))).toEqual(STATUSES);
    expect(layout.scrollWidth).toBeLessThanOrEqual(layout.clientWidth);
    for (const column of layout.columns) {
      expect(column.left, column.title).toBeGreaterThanOrEqual(0);
      expect(column.right, column.title).toBeLessThanOrEqual(layout.innerWidth);
    }
    expect(layout.cards.some((card) => card.text.includes(wrapped.identifier))).toBe(true);
    for (const card of layout.cards)
      expect(card.scrollWidth, card.text).toBeLessThanOrEqual(card.clientWidth);

    // A phone keeps one column under another, each the full width of the board.
    await page.setViewportSize({ width: 390, height: 844 });
    const phone = await page.evaluate<PhoneLayout>(`(() => {
      const board = document.getElementById("issue-board");
      const sections = Array.from(board.querySelectorAll(":scope > section")).map((s) => {
        const box = s.getBoundingClientRect();
        return { top: box.top, width: box.width };
      });
      return { board: board.getBoundingClientRect().width, sections, scrollWidth: document.body.scrollWidth };
    })()`);
    expect(phone.scrollWidth).toBeLessThanOrEqual(390);
    for (const [index, box] of phone.sections.entries()) {
      expect(box.width).toBeGreaterThan(phone.board - 2);
      if (index > 0) expect(box.top).toBeGreaterThan(phone.sections[index - 1]?.top ?? 0);
    }
  });

  it("an open board redraws for a lowered role, and says so when access ends: no stale controls", async () => {
    const person = await companyMember("leaver");
    const members = await api.call<{ members: Array<{ userId: string; email: string }> }>(
      "GET",
      `/api/companies/${companyId}/members`,
    );
    const userId = members.body.members.find((member) => member.email === person.email)?.userId;
    const page = await signedInPage(person);
    await openLive(page, `/companies/${companyId}/issues`, "issue-board");
    const create = page.getByRole("button", { name: "Create issue" });
    expect(await create.isEnabled()).toBe(true);

    // Lowered to viewer: the page reloads itself, drawn without the controls a viewer may not use.
    const lowered = await api.call("PATCH", `/api/companies/${companyId}/members/${userId}`, {
      role: "viewer",
    });
    expect(lowered.status).toBe(200);
    await expect.poll(() => notReloaded(page), { timeout: UI_WAIT_MS }).toBe(false);
    await page.locator('#issue-board[data-live-state="open"]').waitFor();
    expect(await create.count()).toBe(0);

    // Removed: the page says so, offers a way out, and nothing in it can be clicked.
    const removed = await api.call("DELETE", `/api/companies/${companyId}/members/${userId}`);
    expect(removed.status).toBe(204);
    const notice = page.getByRole("alert");
    await expect.poll(() => notice.textContent(), { timeout: UI_WAIT_MS }).toContain("access here has ended");
    expect(await notice.getByRole("link", { name: "Go to your start page" }).getAttribute("href")).toBe("/");
    const enabled = await page
      .locator("#main button:enabled, #main input:enabled, #main select:enabled")
      .count();
    expect(enabled).toBe(0);
    expect(await page.locator("#issue-board").getAttribute("data-live-state")).toBe("ended");
    await page.context().close();
  });
});
