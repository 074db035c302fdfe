import type { ExecutionContext } from "hono";
import { vouchForLineAnswer } from "../../../auth/in-process";
import { findUserById, toPublicUser } from "../../../auth/user-store";
import type { Env } from "../../../core/env";
import type { Principal } from "../../../core/principal";
import type { Db } from "../../../db/client";
import type { LineNoticeRow, MembershipRole } from "../../../db/schema";
import type { Inbound } from "./inbound";

/** The app's fetch as app.ts hands it over: the routes, in this isolate. */
export type AppFetch = (request: Request, env: Env, ctx: ExecutionContext) => Promise<Response>;

/** Where in-process requests pretend to come from; the app routes by path only. */
export const LINE_ORIGIN = "http://company-line.internal";

export interface LineMember {
  userId: string;
  name: string;
  role: MembershipRole;
}

/** Everything one answer is applied with: who, to which notice, and how to call the routes as them. */
export interface AnswerContext {
  env: Env;
  db: Db;
  companyId: string;
  notice: LineNoticeRow;
  member: LineMember;
  inbound: Inbound;
  /** A JSON call to an /api route as the member, marked "via WhatsApp". */
  asMember(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
}

/** How an answer ended, what `line_answers` records, and the one line sent back (null: nothing). */
export interface AnswerResult {
  outcome: "applied" | "refused" | "already_decided" | "not_understood" | "ignored";
  detail: string | null;
  reply: string | null;
}

/**
 * The member as a principal: their own user limited to this company's control plane (read and
 * control), the same rules as when they click in the dashboard. Built here, never from a request.
 */
export async function memberPrincipal(db: Db, companyId: string, userId: string): Promise<Principal | null> {
  const user = await findUserById(db, userId);
  if (!user) return null;
  return {
    via: "api_key",
    user: toPublicUser(user),
    apiKeyId: `line-answer:${companyId}`,
    grant: { scopes: ["read", "control"], sessionId: null, companyId, expiresAt: null },
  };
}

/**
 * Runs one request through the app in-process and waits for its background work (a queued run's
 * announcement) before answering, since no request is around to keep it alive.
 */
export async function runInProcess(appFetch: AppFetch, env: Env, request: Request): Promise<Response> {
  const pending: Promise<unknown>[] = [];
  const ctx: ExecutionContext = {
    waitUntil: (promise) => {
      pending.push(promise);
    },
    passThroughOnException: () => {},
    props: {},
  };
  const response = await appFetch(request, env, ctx);
  await Promise.allSettled(pending);
  return response;
}

/** A JSON request vouched for `principal`, marked as answered on the line. */
export async function callAs(
  appFetch: AppFetch,
  env: Env,
  principal: Principal,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const request = new Request(`${LINE_ORIGIN}${path}`, {
    method,
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const response = await runInProcess(appFetch, env, vouchForLineAnswer(request, principal));
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    parsed = { error: text };
  }
  return { status: response.status, body: parsed };
}

/** "2026-11-28 05:30 UTC". */
export const whenText = (ms: number): string =>
  `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;

/** The route's refusal, or its status when it gave no message. */
export const errorOf = (answer: { status: number; body: Record<string, unknown> }): string =>
  typeof answer.body.error === "string" ? answer.body.error : `HTTP ${answer.status}`;
