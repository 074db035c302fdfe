// Debian's Chromium driven by playwright-core (no browser download), for the dashboard's end-to-end
// tests; screenshots land in docs/screenshots/ where the README links them.
import { mkdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

const AXE_SOURCE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const SCREENSHOT_DIR = path.join(REPO_ROOT, "docs", "screenshots");

/**
 * Flags for a root user on a machine without a network: no sandbox (root), and none of Chromium's
 * background connections, which the closed network would refuse by the dozen.
 */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

export interface BrowserSession {
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
  close(): Promise<void>;
}

export async function openBrowser(baseURL: string): Promise<BrowserSession> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: CHROMIUM_ARGS,
    headless: true,
  });
  const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  return { browser, context, page, close: () => browser.close() };
}

/**
 * A second browser context signed in as `credentials` through the sign-in page: a second person, as
 * far as the server can tell (its own cookies), landed on the Overview.
 */
export async function signedInPage(
  session: BrowserSession,
  baseURL: string,
  credentials: { email: string; password: string },
  options: { height?: number; timeoutMs?: number } = {},
): Promise<Page> {
  const context = await session.browser.newContext({
    baseURL,
    viewport: { width: 1280, height: options.height ?? 860 },
  });
  const page = await context.newPage();
  page.setDefaultTimeout(options.timeoutMs ?? 30_000);
  await page.goto("/login");
  await page.getByLabel("E-mail").fill(credentials.email);
  await page.getByLabel("Password").fill(credentials.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  return page;
}

/** Saves a full-page PNG as docs/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/**
 * WCAG 2.1 A and AA problems axe-core finds on the page as it is now, one line each ("rule (impact):
 * where"). axe is evaluated through the DevTools protocol, which the page's CSP does not govern.
 */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(await readFile(AXE_SOURCE, "utf8"));
  return page.evaluate<string[]>(`
    axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
      .then((result) => result.violations.map((v) =>
        v.id + " (" + v.impact + "): " + v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")))
  `);
}
