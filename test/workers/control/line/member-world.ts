// A member's own number on the company's line (issue 28), as the member-number suites drive it: the
// line is linked on a session a fake bridge holds, which records what WhatsApp would have received.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call } from "../../helpers";
import type { Line } from "../../mcp/whatsapp-line";
import { addMembership, type BoardUser, boardUser } from "../helpers";

export const meOf = (companyId: string) => `/api/companies/${companyId}/line/members/me`;

export interface MyNumber {
  phone: string | null;
  verified: boolean;
  codePending: boolean;
  notify: string[];
  quietHours: { start: string; end: string } | null;
  timeZone: string;
}

/** A number no other test uses (suites share D1 storage). */
export const freshPhone = () =>
  `4917${String(crypto.getRandomValues(new Uint32Array(1))[0])
    .padStart(10, "0")
    .slice(0, 8)}`;

export async function join(
  companyId: string,
  role: "member" | "viewer" | "owner" = "member",
): Promise<BoardUser> {
  const user = await boardUser();
  await addMembership(companyId, user.userId, role);
  return user;
}

export const rowOf = (companyId: string, userId: string) =>
  env.DB.prepare("SELECT * FROM line_members WHERE company_id = ? AND user_id = ?")
    .bind(companyId, userId)
    .first<{
      phone: string;
      verified_at: number | null;
      code_hash: string | null;
      code_attempts: number;
      notify: string;
      time_zone: string;
    }>();

/** The codes the line sent to `phone`, in order. */
export function codesSentTo(line: Line, phone: string, companyName: string) {
  return line.sent(`${phone}@s.whatsapp.net`).map((sent) => {
    const text = String(sent.content.text);
    expect(sent.content.type).toBe("text");
    const match = text.match(/^Your Switchboard code for (.+): (\d{6}) \(valid 10 minutes\)$/);
    expect(match, text).not.toBeNull();
    expect(match?.[1]).toBe(companyName);
    return match?.[2] ?? "";
  });
}

/** Moves the last code's send time back, as if a minute had passed. */
export const aMinuteLater = (companyId: string, userId: string) =>
  env.DB.prepare(
    "UPDATE line_members SET code_sent_at = code_sent_at - 61000 WHERE company_id = ? AND user_id = ?",
  )
    .bind(companyId, userId)
    .run();

export async function requestCode(line: Line, user: BoardUser, phone: string) {
  const put = await call<MyNumber>("PUT", meOf(line.company.id), { body: { phone }, headers: user.headers });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  const codes = codesSentTo(line, phone.replace(/^\+/, ""), line.company.name);
  return codes[codes.length - 1] ?? "";
}

export const verify = (companyId: string, user: BoardUser, code: unknown) =>
  call<{ error?: string } & MyNumber>("POST", `${meOf(companyId)}/verify`, {
    body: { code },
    headers: user.headers,
  });
