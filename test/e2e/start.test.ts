// `npm start` end to end, as a user who set nothing runs it (fresh state, default log level, bridge,
// local runner and cron on): the README flow exactly as a user runs it with curl, a first agent run on
// the local runner, a quiet and truthful output, then Ctrl-C.
import { existsSync } from "node:fs";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminClient } from "../support/api.ts";
import { createAgent, createCompany, invoke, sh, untilRun } from "../support/control-runs.ts";
import { isPortOpen, type Stack, startStack } from "../support/stack.ts";

const ADMIN_EMAIL = "admin@example.com";
const ADMIN_PASSWORD = "change-me-locally";
const SESSION_COOKIE = "web-auth.session-token";

interface Envelope<T> {
  status: boolean;
  message: string;
  data: T;
}

interface User {
  id: string;
  name: string;
  email: string;
  image: string | null;
  role: string;
}

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ logLevel: null, emptyDatabase: true });
});

/**
 * Lines that alarm a reader: an error or warning (ours, wrangler's ✘/▲ banners, the bridge's and the
 * runner's JSON `"level":"warn"`/`"error"`), workerd's `Broken pipe` and the native `stack:` dump it
 * comes with, or a JavaScript stack frame.
 */
const ALARMING = [/error/i, /warn/i, /✘|▲/, /broken pipe/i, /^\s*stack: /, /^\s+at .*:\d+:\d+\)?$/];
/** The bridge's and the runner's JSON lines below warn, which LOG_LEVEL=warn (the default) hides. */
const CHATTY = /"level":"(info|debug)"/;

function alarmingLines(output: string): string[] {
  return stripVTControlCharacters(output)
    .split("\n")
    .filter((line) => ALARMING.some((pattern) => pattern.test(line)) || CHATTY.test(line));
}

afterAll(async () => {
  await stack?.stop();
});

/** The `name=value` pair of the session cookie, as curl's cookie jar would send it back. */
function sessionCookieFrom(response: Response): string {
  const cookie = response.headers
    .getSetCookie()
    .map((header) => header.split(";")[0] ?? "")
    .find((pair) => pair.startsWith(`${SESSION_COOKIE}=`));
  if (!cookie) throw new Error(`login did not set ${SESSION_COOKIE}`);
  return cookie;
}

async function logInAsAdmin(): Promise<{ cookie: string; csrfToken: string }> {
  const response = await fetch(`${stack.baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as Envelope<{ user: User; csrfToken: string }>;
  expect(body.status).toBe(true);
  expect(typeof body.data.csrfToken).toBe("string");
  return { cookie: sessionCookieFrom(response), csrfToken: body.data.csrfToken };
}

describe("npm start", () => {
  it("answers GET /api/health", async () => {
    const response = await fetch(`${stack.baseUrl}/api/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: true, message: "ok", data: { service: "switchboard" } });
  });

  it("runs the README flow: log in, create an API key, call the API with it", async () => {
    const { cookie, csrfToken } = await logInAsAdmin();

    const keyResponse = await fetch(`${stack.baseUrl}/api/user/api-key`, {
      method: "POST",
      headers: { Cookie: cookie, "X-CSRF-Token": csrfToken },
    });
    expect(keyResponse.status).toBe(201);
    const keyBody = (await keyResponse.json()) as Envelope<{ apiKey: string }>;
    expect(keyBody.data.apiKey).toEqual(expect.any(String));
    expect(keyBody.data.apiKey.length).toBeGreaterThan(20);

    const sessionResponse = await fetch(`${stack.baseUrl}/api/auth/session`, {
      headers: { "X-API-Key": keyBody.data.apiKey },
    });
    expect(sessionResponse.status).toBe(200);
    const session = (await sessionResponse.json()) as { user: User; expires: string | null };
    expect(session.user.email).toBe(ADMIN_EMAIL);
    expect(session.user.role).toBe("SUPERADMIN");
    expect(session.expires).toBeNull();
  });

  it("answers 401 without credentials", async () => {
    const response = await fetch(`${stack.baseUrl}/api/auth/session`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ status: false, message: "Unauthorized" });
  });

  it("serves the API docs as HTML", async () => {
    const response = await fetch(`${stack.baseUrl}/api/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await response.text()).toContain("/api/user/api-key");
  });

  it("runs a first agent on the local runner, in a work folder under the stack's state dir", async () => {
    const admin = await adminClient(stack.baseUrl);
    const companyId = await createCompany(admin);
    const agent = await createAgent(admin, companyId, sh("pwd > where.txt"));
    const run = await invoke(admin, agent.id);
    const done = await untilRun(admin, run.id, (r) => r.finishedAt !== null, "the first run", 60_000);
    expect(done).toMatchObject({ status: "succeeded", errorReason: null });
    // Deleting the state dir cleans the runner too; another clone does not share it.
    expect(existsSync(path.join(stack.stateDir, "runner", agent.id, "where.txt"))).toBe(true);
  });

  it("prints no error, warning, stack trace or info chatter on a healthy start and first requests", async () => {
    // By now the bridge has linked up and the runner has run an agent: whatever they print is printed
    // (the last test checks the whole output again once everything has stopped).
    expect(stack.output()).toContain("[start] READY");
    expect(alarmingLines(stack.output())).toEqual([]);
  });

  it("serves the Worker on its own port and names where the cron trigger listens, for a tick by hand", async () => {
    // docs/operations.md, "The cron trigger": the start line prints the trigger's address.
    const trigger = /scheduled trigger: (http:\/\/\S+)\)/.exec(stripVTControlCharacters(stack.output()))?.[1];
    expect(trigger).toMatch(/\/cdn-cgi\/handler\/scheduled$/);
    const tick = await fetch(`${trigger}?cron=${encodeURIComponent("* * * * *")}`);
    expect(tick.status).toBe(200);
    // The Worker's port is the Worker's alone: Miniflare's trigger path is not served there.
    const onWorkerPort = await fetch(`${stack.baseUrl}/cdn-cgi/handler/scheduled`, { redirect: "manual" });
    expect(onWorkerPort.status).not.toBe(200);
    await onWorkerPort.body?.cancel();
  });

  it("stops every child on SIGTERM (the Ctrl-C contract): the port closes, quietly", async () => {
    expect(await isPortOpen(stack.port)).toBe(true);
    await stack.stop();
    expect(await isPortOpen(stack.port)).toBe(false);
    expect(alarmingLines(stack.output())).toEqual([]);
  });
});
