// The dashboard in a real browser (Debian's headless Chromium through playwright-core) against the
// real local stack (`SIMULATOR=1 npm start`: wrangler dev + a bridge on the simulated WhatsApp network,
// whose runner spawns agents as child processes). What a person does, click by click:
//   messaging: sign in → create a session → the QR appears → it is scanned in the simulator → the page
//     says "Connected as …" without a reload → a test message is sent → its webhook shows in the log;
//   board: create a company → request a hire → approve it → create an issue for the new agent → the
//     agent's run moves the issue to done while the page is open.
// The run writes the screenshots in docs/screenshots/ that the README shows.
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { accessibilityProblems, type BrowserSession, openBrowser, screenshot } from "../support/browser.ts";
import { payloadOf, type Receiver, startReceiver, webhookStackEnv } from "../support/receiver.ts";
import { type Stack, startStack } from "../support/stack.ts";

const ADMIN = { email: "admin@example.com", password: "change-me-locally" };
const AGENT_SCRIPT = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "fixtures",
  "heartbeat-agent.mjs",
);
const UI_WAIT_MS = 30_000;

let stack: Stack;
let receiver: Receiver;
let api: ApiClient;
let browser: BrowserSession;
let page: Page;

beforeAll(async () => {
  [stack, receiver] = await Promise.all([
    // New QRs every 2 s instead of WhatsApp's 20 s, so the test sees the page swap one in.
    startStack({ env: { ...webhookStackEnv("500,1000"), SIMULATOR_QR_INTERVAL_MS: "2000" } }),
    startReceiver(),
  ]);
  api = await adminClient(stack.baseUrl);
  browser = await openBrowser(stack.baseUrl);
  page = browser.page;
  page.setDefaultTimeout(UI_WAIT_MS);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await stack?.stop();
});

/** Every page the test visits is also checked against WCAG 2.1 AA by axe-core; found problems fail the test. */
const problemsByPage = new Map<string, string[]>();
async function capture(name: string): Promise<void> {
  await screenshot(page, name);
  const problems = await accessibilityProblems(page);
  if (problems.length > 0) problemsByPage.set(name, problems);
}

/** Marks the current document; if the page reloads or navigates, the mark is gone. */
async function markDocument(): Promise<void> {
  await page.evaluate('document.documentElement.dataset.e2eMark = "still-here"');
}
async function documentIsUnchanged(): Promise<boolean> {
  return page.evaluate<boolean>('document.documentElement.dataset.e2eMark === "still-here"');
}

async function signIn(): Promise<void> {
  await page.goto("/");
  expect(new URL(page.url()).pathname).toBe("/login");
  await capture("sign-in");
  await page.getByLabel("E-mail").fill(ADMIN.email);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
}

describe("dashboard in a browser", () => {
  it("signs in, pairs a phone by QR, sends a test message and shows its webhook delivery", async () => {
    await signIn();
    const slug = "front-desk";

    await page.getByRole("link", { name: "Sessions", exact: true }).click();
    await page.getByLabel("Name", { exact: true }).fill("Front desk");
    await page.getByLabel("Session ID (optional)").fill(slug);
    await page.getByRole("button", { name: "Create session" }).click();
    await page.waitForURL(`**/sessions/${slug}/pair`);

    // The QR arrives over the session's WebSocket once the bridge has started the socket.
    const qr = page.locator("img[data-qr]");
    await qr.waitFor({ state: "visible" });
    const firstQr = await qr.getAttribute("src");
    expect(firstQr).toMatch(/^data:image\/png;base64,/);
    await capture("pairing-qr");

    // The next QR replaces the first on the same page: no reload, no polling of /qr.
    await markDocument();
    await expect.poll(() => qr.getAttribute("src"), { timeout: 20_000, interval: 200 }).not.toBe(firstQr);
    expect(await documentIsUnchanged()).toBe(true);

    expect((await api.call("POST", `/api/sessions/${slug}/simulate/scan`)).status).toBe(200);
    await page.getByText("Connected as").waitFor({ state: "visible" });
    expect(await documentIsUnchanged()).toBe(true);
    await expect.poll(() => qr.isVisible()).toBe(false);
    await capture("pairing-connected");

    // Bad input: the same session id again. The server's message sits next to the field; nothing is added.
    await page.goto("/sessions");
    const before = (await api.call<{ data: unknown[] }>("GET", "/api/sessions")).body.data.length;
    await page.getByLabel("Name", { exact: true }).fill("Duplicate");
    await page.getByLabel("Session ID (optional)").fill(slug);
    await page.getByRole("button", { name: "Create session" }).click();
    const idError = page.locator("#field-sessionId-error");
    await idError.waitFor();
    expect(await idError.textContent()).toMatch(/already in use/i);
    expect(await page.getByLabel("Session ID (optional)").getAttribute("aria-invalid")).toBe("true");
    expect((await api.call<{ data: unknown[] }>("GET", "/api/sessions")).body.data.length).toBe(before);
    await capture("sessions");

    // A webhook, then a test message, then that message's delivery in the log.
    await page.goto(`/sessions/${slug}`);
    await page.getByLabel("Webhook URL").fill(receiver.url("/dashboard-hook"));
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.getByText("Webhook added").waitFor();
    await page.getByLabel("To (phone number)").fill("15550009876");
    await page.getByLabel("Message").fill("Hello from the dashboard");
    await page.getByRole("button", { name: "Send test message" }).click();
    await page.getByText("Message sent").waitFor();
    await capture("session-detail");

    const delivered = await eventually(
      async () => {
        const got = await receiver.received("/dashboard-hook");
        return got.find((entry) => payloadOf(entry).event === "message.sent");
      },
      UI_WAIT_MS,
      "message.sent at the receiver",
    );
    expect(JSON.stringify(payloadOf(delivered).data)).toContain("Hello from the dashboard");

    await page.getByRole("link", { name: receiver.url("/dashboard-hook") }).click();
    await page.locator("#deliveries-live").getByText("message.sent").first().waitFor();
    await capture("webhook-deliveries");

    await page.goto("/api-key");
    await page.getByRole("button", { name: /Generate a new key/ }).click();
    const key = await page.locator("#new-api-key").inputValue();
    expect(key.length).toBeGreaterThan(20);
    const withKey = await fetch(`${stack.baseUrl}/api/sessions`, { headers: { "X-API-Key": key } });
    expect(withKey.status).toBe(200);
    await capture("api-key");

    // The user's own page for their number on each company's line (none yet: no company).
    await page.getByRole("link", { name: "Your phone" }).click();
    await page.getByRole("heading", { name: "Your phone" }).waitFor();
    await page.getByText("You belong to no company yet").waitFor();
    await capture("phone");
  });

  it("runs a company: hire approved, issue created, the agent's run moves it to done on screen", async () => {
    // Fixed names (the stack is fresh for this file), so the screenshots change only when the pages do.
    const company = "Acme Robotics";
    const agentName = "Builder";

    await page.goto("/companies");
    await page.getByLabel("Company name").fill(company);
    await page.getByRole("button", { name: "Create company" }).click();
    await page.getByRole("heading", { name: company }).waitFor();
    const companyPath = new URL(page.url()).pathname;

    // Hire request with a bad adapter config first: the message sits next to the field.
    await page.getByRole("link", { name: "Org chart", exact: true }).click();
    await page.getByLabel("Agent name", { exact: true }).fill(agentName);
    await page.getByLabel("Role", { exact: true }).selectOption("engineer");
    await page.getByLabel("Adapter", { exact: true }).selectOption("coder_local");
    await page.getByLabel("Adapter config (JSON)").fill("{not json");
    await page.getByRole("button", { name: "Request hire" }).click();
    await page.locator("#field-adapterConfig-error").waitFor();
    await page
      .getByLabel("Adapter config (JSON)")
      .fill(JSON.stringify({ command: process.execPath, args: [AGENT_SCRIPT], timeoutSec: 60 }));
    await page.getByRole("button", { name: "Request hire" }).click();
    await page.getByText("Hire requested").waitFor();

    await page.getByRole("link", { name: "Approvals", exact: true }).click();
    const request = page.locator("article", { hasText: agentName });
    await capture("approvals");
    await request.getByRole("button", { name: "Approve" }).click();
    await page.getByText("Approved").first().waitFor();

    await page.getByRole("link", { name: "Org chart", exact: true }).click();
    await page.locator(".tree", { hasText: agentName }).waitFor();
    await capture("org-chart");

    await page.getByRole("link", { name: "Issues", exact: true }).click();
    await page.getByLabel("Title", { exact: true }).fill("Write the welcome note");
    await page.getByLabel("Assignee").last().selectOption({ label: agentName });
    await page.getByRole("button", { name: "Create issue" }).click();
    await page.waitForURL("**/issues/**");
    await markDocument();

    // The assignment wakes the agent; the bridge's runner spawns it; it checks out and sets done.
    const status = page.locator("#issue-status");
    await expect
      .poll(async () => (await status.textContent())?.trim(), { timeout: 90_000, interval: 500 })
      .toMatch(/done/i);
    expect(await documentIsUnchanged()).toBe(true);
    // The run's output is on the issue page, folded in its timeline entry.
    await page.locator("#issue-live pre").first().waitFor({ state: "attached" });
    await capture("issue-done");

    await page.goto(`${companyPath}/issues`);
    await capture("issue-board");
    await page.goto(`${companyPath}/costs`);
    await capture("costs");
    await page.goto(`${companyPath}/routines`);
    await capture("routines");

    // Down to a phone: the board still renders and its navigation stays usable.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${companyPath}/issues`);
    await page.getByRole("link", { name: "Write the welcome note" }).waitFor();
    await capture("phone-issues");
  });

  it("is usable by keyboard and has no WCAG 2.1 AA problems axe can find on any page visited", async () => {
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.goto("/sessions");
    await page.keyboard.press("Tab");
    expect(await page.evaluate<string>("document.activeElement.textContent")).toBe("Skip to content");
    await page.keyboard.press("Enter");
    // Following the in-page link is asynchronous in Chromium: the URL updates after the key event.
    await expect.poll(() => new URL(page.url()).hash, { timeout: 20_000 }).toBe("#main");
    expect(Object.fromEntries(problemsByPage)).toEqual({});
  });
});
