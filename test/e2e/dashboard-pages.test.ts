// The control-plane pages in a real browser (Debian's headless Chromium through playwright-core)
// against the real local stack (`npm start`, whose runner spawns the agent as a child process):
// every page is visited, checked by axe-core and photographed into docs/screenshots/. Click by click:
// an agent does an issue → its page lists the run → the run's page shows what it printed; secrets,
// projects and goals, activity, settings, runners; export preview → import preview → apply creates
// exactly the company the preview named.
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient } from "../support/api.ts";
import { accessibilityProblems, type BrowserSession, openBrowser, screenshot } from "../support/browser.ts";
import { type Stack, startStack } from "../support/stack.ts";

const ADMIN = { email: "admin@example.com", password: "change-me-locally" };
const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "heartbeat-agent.mjs");
/**
 * The agent's configuration is on the screenshots: the script runs from a directory whose name reads
 * well on any machine (/tmp/northwind-labs), not from wherever this checkout happens to be.
 */
const AGENT_DIR = path.join(tmpdir(), "northwind-labs");
const AGENT_SCRIPT = path.join(AGENT_DIR, "heartbeat-agent.mjs");
const UI_WAIT_MS = 30_000;
const COMPANY = "Northwind Labs";
const AGENT = "Writer";

let stack: Stack;
let api: ApiClient;
let browser: BrowserSession;
let page: Page;
let companyPath: string;

beforeAll(async () => {
  mkdirSync(AGENT_DIR, { recursive: true });
  copyFileSync(FIXTURE, AGENT_SCRIPT);
  stack = await startStack();
  api = await adminClient(stack.baseUrl);
  browser = await openBrowser(stack.baseUrl);
  page = browser.page;
  page.setDefaultTimeout(UI_WAIT_MS);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  rmSync(AGENT_DIR, { recursive: true, force: true });
});

/** Every page visited is checked against WCAG 2.1 AA by axe-core; the last test fails on any problem. */
const problemsByPage = new Map<string, string[]>();
async function capture(name: string): Promise<void> {
  await screenshot(page, name);
  const problems = await accessibilityProblems(page);
  if (problems.length > 0) problemsByPage.set(name, problems);
}

const tab = (name: string) => page.getByRole("link", { name, exact: true }).click();

describe("control-plane pages in a browser", () => {
  it("an agent's page lists its run, and the run's page shows its transcript", async () => {
    await page.goto("/login");
    await page.getByLabel("E-mail").fill(ADMIN.email);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();

    await page.goto("/companies");
    await page.getByLabel("Company name").fill(COMPANY);
    await page.getByLabel("New agents need board approval").uncheck();
    await page.getByRole("button", { name: "Create company" }).click();
    await page.getByRole("heading", { name: COMPANY }).waitFor();
    companyPath = new URL(page.url()).pathname;

    await tab("Org chart");
    await page.getByLabel("Agent name", { exact: true }).fill(AGENT);
    await page.getByLabel("Role", { exact: true }).selectOption("engineer");
    await page.getByLabel("Adapter", { exact: true }).selectOption("process");
    await page
      .getByLabel("Adapter config (JSON)")
      .fill(JSON.stringify({ command: "node", args: [AGENT_SCRIPT], timeoutSec: 60 }));
    await page.getByRole("button", { name: "Request hire" }).click();
    await page.getByText("Agent hired").waitFor();

    await tab("Issues");
    await page.getByLabel("Title", { exact: true }).fill("Draft the changelog");
    await page.getByLabel("Assignee").last().selectOption({ label: AGENT });
    await page.getByRole("button", { name: "Create issue" }).click();
    await page.waitForURL("**/issues/**");
    await expect
      .poll(async () => (await page.locator("#issue-status").textContent())?.trim(), {
        timeout: 90_000,
        interval: 500,
      })
      .toMatch(/done/i);

    await page.goto(`${companyPath}/agents`);
    await capture("agents");
    await page.getByRole("link", { name: AGENT, exact: true }).click();
    await page.getByRole("heading", { name: "Recent runs" }).waitFor();
    await expect.poll(() => page.getByText("succeeded").count(), { timeout: 30_000 }).toBeGreaterThan(0);
    await capture("agent-detail");

    await page
      .getByRole("link", { name: /^Transcript/ })
      .first()
      .click();
    await page.getByRole("heading", { name: `Run of ${AGENT}` }).waitFor();
    const output = await page.locator("article pre").last().textContent();
    expect(output).toContain(`I am ${AGENT}`);
    expect(output).toContain('working on "Draft the changelog"');
    await capture("agent-run");
  });

  it("the agent's forms: a bad config next to its field, then a key shown once", async () => {
    await page.getByRole("link", { name: `Back to ${AGENT}` }).click();
    const agentPath = new URL(page.url()).pathname;
    await page.getByLabel("Runtime config (JSON)").fill("{broken");
    await page.getByRole("button", { name: "Save configuration" }).click();
    await page.locator("#field-runtimeConfig-error").waitFor();
    expect(await page.getByLabel("Runtime config (JSON)").getAttribute("aria-invalid")).toBe("true");

    await page.goto(agentPath);
    await page.getByLabel("Key name").fill("deploy");
    await page.getByRole("button", { name: "Create key" }).click();
    const token = await page.locator("#new-agent-key").inputValue();
    const me = await fetch(`${stack.baseUrl}/api/agents/me`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(me.status).toBe(200);
    await capture("agent-key");
  });

  it("secrets, projects and goals, activity and settings", async () => {
    await page.goto(`${companyPath}/secrets`);
    await page.getByLabel("Name", { exact: true }).fill("GitHub token");
    await page.getByLabel("Value").fill("ghp_example_value");
    await page.getByRole("button", { name: "Create secret" }).click();
    await page.getByText("Secret GitHub token created").waitFor();
    await capture("secrets");
    await page.getByRole("link", { name: "GitHub token" }).click();
    await page.getByLabel("New value").fill("ghp_rotated_value");
    await page.getByRole("button", { name: "Rotate secret" }).click();
    await page.getByText("now version 2").waitFor();
    await capture("secret-detail");

    await tab("Projects and goals");
    await page.getByLabel("Goal title").fill("Ship version 2");
    await page.getByRole("button", { name: "Create goal" }).click();
    await page.getByText("Goal Ship version 2 created").waitFor();
    await page.getByLabel("Goal title").fill("Write the docs");
    await page.getByLabel("Parent goal").selectOption({ label: "Ship version 2 (company)" });
    await page.getByRole("button", { name: "Create goal" }).click();
    await page.getByText("Goal Write the docs created").waitFor();
    await page.getByLabel("Project name").fill("Documentation");
    await page.getByLabel("Goal", { exact: true }).selectOption({ label: "Write the docs (team)" });
    await page.getByRole("button", { name: "Create project" }).click();
    await page.getByText("Project Documentation created").waitFor();
    await capture("projects-goals");

    await tab("Activity");
    await page.getByLabel("Who").selectOption({ label: `Agent ${AGENT}` });
    await page.getByRole("button", { name: "Filter" }).click();
    await page.locator("td code", { hasText: "issue." }).first().waitFor();
    await capture("activity");
    await page.getByLabel("From (date)").fill("yesterday");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.locator("#field-since-error").waitFor();

    await tab("Settings");
    await page.getByLabel("Monthly budget (cents)").fill("250000");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Settings saved").waitFor();
    await capture("company-settings");
  });

  it("runners: register (token shown once) and revoke", async () => {
    // The main navigation's Runners (all of yours), not the company's Runners tab.
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Runners", exact: true })
      .click();
    await page.getByLabel("Runner name").fill("spare machine");
    await page.getByLabel(COMPANY).check();
    await page.getByRole("button", { name: "Register runner" }).click();
    expect((await page.locator("#new-runner-token").inputValue()).length).toBeGreaterThan(20);
    await capture("runners");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Revoke spare machine" }).click();
    await page.getByText("Runner revoked").waitFor();
  });

  it("export preview → import preview → apply creates exactly the company the preview named", async () => {
    await page.goto(`${companyPath}/package`);
    await page.getByRole("button", { name: "Preview export" }).click();
    await page.getByRole("heading", { name: /^Package / }).waitFor();
    await capture("package-export");
    await page.getByLabel("New company's name").fill("Northwind Copy");
    await page.getByRole("button", { name: "Preview the import" }).click();
    await page.getByRole("heading", { name: "What the import will do" }).waitFor();
    expect((await page.locator("#import-target").textContent())?.replace(/\s+/g, " ")).toContain(
      "Create the company Northwind Copy",
    );
    await page.getByRole("heading", { name: "Agents (1 to create)" }).waitFor();
    await capture("package-import-preview");

    const before = (await api.call<Array<{ name: string }>>("GET", "/api/companies")).body;
    expect(before.map((company) => company.name)).not.toContain("Northwind Copy");
    await page.getByRole("button", { name: "Apply: import exactly this" }).click();
    await page.getByRole("heading", { name: "Northwind Copy" }).waitFor();
    const copyId = new URL(page.url()).pathname.split("/")[2];
    const agents = await api.call<Array<{ name: string }>>("GET", `/api/companies/${copyId}/agents`);
    expect(agents.body.map((agent) => agent.name)).toEqual([AGENT]);
    await page.getByRole("link", { name: "Import and export", exact: true }).click();
    await capture("package-import");
  });

  it("has no WCAG 2.1 AA problems axe can find on any page visited", () => {
    expect(Object.fromEntries(problemsByPage)).toEqual({});
  });
});
