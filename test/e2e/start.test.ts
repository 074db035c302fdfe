// `npm start` end to end: the README flow exactly as a user runs it with curl, then Ctrl-C.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
  stack = await startStack();
});

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

  it("stops every child on SIGTERM (the Ctrl-C contract): the port closes", async () => {
    expect(await isPortOpen(stack.port)).toBe(true);
    await stack.stop();
    expect(await isPortOpen(stack.port)).toBe(false);
  });
});
