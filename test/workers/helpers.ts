import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import worker from "../../workers";
import { assertMatchesContract } from "./contract";

export const ROOT = { email: "root@example.test", password: "root-password-for-tests" };
export const BASE = "http://switchboard.test";

export interface Session {
  cookie: string;
  csrf: string;
  userId: string;
}

export interface JsonResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

type Json = Record<string, unknown>;

/**
 * Runs a request through the Worker's own fetch handler, in this isolate, and waits for its
 * background work (waitUntil) before answering. SELF.fetch would do the same through the test
 * harness, whose per-request cost grows with every request a file makes (workers-sdk #15446: 5 ms
 * becomes 300 ms within a thousand requests). Every response is checked against the OpenAPI
 * document (test/workers/contract.ts): one it does not describe fails the test that received it.
 */
export async function dispatch(request: Request, bindings: typeof env = env): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, bindings, ctx);
  await waitOnExecutionContext(ctx);
  await assertMatchesContract(request, response);
  return response;
}

/** `fetch(url, init)` through `dispatch`: for answers `call` would decode (bytes, archives, headers). */
export const fetchWorker = (url: string, init?: RequestInit) => dispatch(new Request(url, init));

/** The Worker's scheduled handler, as the every-minute cron trigger calls it, with its background work. */
export async function scheduledTick(scheduledTime: number): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime, cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

export async function call<T = Json>(
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: BodyInit; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body: BodyInit | undefined = options.rawBody;
  if (options.body !== undefined) {
    headers["content-type"] ??= "application/json";
    body = JSON.stringify(options.body);
  }
  const response = await dispatch(
    new Request(`${BASE}${path}`, { method, headers, body, redirect: "manual" }),
  );
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON (the docs page): keep the text.
  }
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** A fresh client address per caller keeps the per-address login throttle out of unrelated tests. */
export const freshAddress = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}-${crypto.randomUUID()}`;

export async function login(email: string, password: string, address = freshAddress()): Promise<Session> {
  const res = await call<{ data: { csrfToken: string; user: { id: string } } }>("POST", "/api/auth/login", {
    body: { email, password },
    headers: { "CF-Connecting-IP": address },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const setCookie = res.headers.get("set-cookie") ?? "";
  const cookie = setCookie.split(";")[0] ?? "";
  return { cookie, csrf: res.body.data.csrfToken, userId: res.body.data.user.id };
}

export const asSession = (s: Session, extra: Record<string, string> = {}) => ({
  cookie: s.cookie,
  "X-CSRF-Token": s.csrf,
  ...extra,
});

export const asKey = (key: string) => ({ "X-API-Key": key });

export async function rootSession(): Promise<Session> {
  return login(ROOT.email, ROOT.password);
}

export const uniqueEmail = (label = "user") => `${label}-${crypto.randomUUID().slice(0, 8)}@example.test`;

/** Creates a user through the API as root and logs them in. */
export async function createUser(
  role: "SUPERADMIN" | "OWNER" | "STAFF",
  root?: Session,
): Promise<Session & { email: string; password: string }> {
  const admin = root ?? (await rootSession());
  const email = uniqueEmail(role.toLowerCase());
  const password = `pw-${crypto.randomUUID()}`;
  const res = await call("POST", "/api/users", {
    body: { name: `A ${role}`, email, password, role },
    headers: asSession(admin),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { ...(await login(email, password)), email, password };
}

export async function generateKey(session: Session): Promise<string> {
  const res = await call<{ data: { apiKey: string } }>("POST", "/api/user/api-key", {
    headers: asSession(session),
  });
  expect(res.status).toBe(201);
  return res.body.data.apiKey;
}

export async function count(table: string): Promise<number> {
  const row = await env.DB.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>();
  return row?.n ?? 0;
}
