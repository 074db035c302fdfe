// Shared by the line notices tests: numbers, members, approvals and what the line was asked to send.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { emit } from "../../fake-bridge";
import { call } from "../../helpers";
import type { Line } from "../../mcp/whatsapp-line";
import type { BoardUser } from "../helpers";
import { join } from "./member-world";

let nextPhone = 491_700_000_000;
export const phone = () => String(++nextPhone);
export const jid = (digits: string) => `${digits}@s.whatsapp.net`;

export interface NoticeRow {
  id: string;
  user_id: string;
  kind: string;
  subject_type: string;
  subject_id: string;
  status: string;
  text: string;
  poll_options: string | null;
  not_before: number;
  wa_message_id: string | null;
  error: string | null;
}

export async function noticesOf(companyId: string): Promise<NoticeRow[]> {
  const rows = await env.DB.prepare(
    "SELECT * FROM line_notices WHERE company_id = ? ORDER BY created_at, rowid",
  )
    .bind(companyId)
    .all<NoticeRow>();
  return rows.results;
}

/** A member of the company with `role` (member-world.ts). */
export const member = join;

/** The line's session drops: the bridge reports it disconnected, reconnecting. */
export const lineGoesDown = (line: Line) =>
  emit(line.session.link, 1, 50, {
    kind: "disconnected",
    code: 428,
    reason: "connection closed",
    next: "reconnecting",
  });

/** The line's session is connected again. */
export const lineComesBack = (line: Line) =>
  emit(line.session.link, 1, 51, { kind: "connected", me: { id: line.me } });

/**
 * Every kind but the digest: the digest comes from the cron after 09:00 of the member's day, so a test
 * that ticks the cron at the wall clock's time would otherwise see one or not depending on the hour.
 */
const NOTICES_BUT_DIGEST = ["approvals", "questions", "budget", "failed_runs"];

/**
 * Links a number for the member; verified unless told otherwise. Quiet hours as [start, end) minutes,
 * UTC. `notify`: the kinds received (every kind but `digest` unless told).
 */
export async function linkNumber(
  companyId: string,
  user: BoardUser,
  options: { verified?: boolean; quiet?: [number, number]; notify?: string[] } = {},
): Promise<string> {
  const digits = phone();
  const now = Date.now();
  await env.DB.prepare(
    `INSERT INTO line_members (company_id, user_id, phone, verified_at, quiet_start_minute, quiet_end_minute,
       time_zone, notify, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'UTC', ?, ?, ?)`,
  )
    .bind(
      companyId,
      user.userId,
      digits,
      options.verified === false ? null : now,
      options.quiet?.[0] ?? null,
      options.quiet?.[1] ?? null,
      JSON.stringify(options.notify ?? NOTICES_BUT_DIGEST),
      now,
      now,
    )
    .run();
  return digits;
}

export async function requestApproval(line: Line, title: string): Promise<string> {
  const created = await call<{ id: string }>("POST", `/api/companies/${line.company.id}/approvals`, {
    body: { type: "request_board_approval", payload: { title }, requestedByAgentId: line.agent.id },
    headers: line.owner.headers,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

export const polls = (line: Line, digits: string) =>
  line.sent(jid(digits)).filter((sent) => sent.content.type === "poll");
