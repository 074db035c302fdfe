import { z } from "@hono/zod-openapi";
import { iso } from "../../db/client";
import {
  LINE_NOTICE_KINDS,
  type LineMemberRow,
  MEMBERSHIP_ROLES,
  type MembershipRole,
} from "../../db/schema";
import { clockOf } from "./member-store";

/** The shapes of a member's number on the company's line (member-routes.ts). */

export const CompanyParamSchema = z.object({ companyId: z.string().min(1).max(100) });

const Kind = z.enum(LINE_NOTICE_KINDS).openapi({
  description:
    "`approvals` (pending approvals your role may decide), `questions` (agents' questions to you), " +
    "`budget` (budget incidents), `failed_runs` (failed runs on issues you watch), `digest` (a daily digest at 09:00 in your time zone, or when your quiet hours end, when anything waits for you), " +
    "`mentions` (someone @-mentioned you in a comment or assigned you an issue; reply quoting it to comment on the issue)",
});

const Clock = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, "a time of day as HH:MM (00:00–23:59)")
  .openapi({ example: "22:00" });

const QuietHoursSchema = z.object({ start: Clock, end: Clock }).openapi("LineQuietHours", {
  description: "Nothing is sent from `start` until `end` in your time zone (wrapping past midnight)",
});

export const MyLineNumberSchema = z
  .object({
    companyId: z.string(),
    phone: z
      .string()
      .nullable()
      .openapi({ description: "Your number, digits only in international form; null when none is linked" }),
    verified: z.boolean(),
    verifiedAt: z.string().nullable().openapi({ format: "date-time" }),
    codePending: z.boolean().openapi({ description: "A code was sent and may still be entered" }),
    codeExpiresAt: z.string().nullable().openapi({ format: "date-time" }),
    notify: z.array(Kind),
    quietHours: QuietHoursSchema.nullable(),
    timeZone: z.string().openapi({ example: "Europe/Berlin" }),
  })
  .openapi("MyLineNumber");

export const LineMemberSchema = z
  .object({
    userId: z.string(),
    name: z.string(),
    role: z.enum(MEMBERSHIP_ROLES),
    phone: z.string().nullable().openapi({ description: "Masked but for the last 4 digits; null when none" }),
    verified: z.boolean(),
    notify: z.array(Kind),
    quietHours: QuietHoursSchema.nullable(),
    timeZone: z.string(),
  })
  .openapi("LineMember");

/** E.164: up to 15 digits, no leading zero; `+` optional. Spaces and dashes are not accepted. */
const E164 = /^\+?[1-9]\d{6,14}$/;

export const PutNumberBodySchema = z
  .strictObject({
    phone: z
      .string()
      .max(16)
      .regex(E164, "an international number in E.164 form, e.g. +491701234567 (7–15 digits, no spaces)")
      .openapi({ example: "+491701234567" }),
  })
  .openapi("MyLineNumberBody");

export const VerifyBodySchema = z
  .strictObject({
    code: z.string().regex(/^\d{6}$/, "the 6-digit code the line sent"),
  })
  .openapi("MyLineNumberVerify");

export const PreferencesBodySchema = z
  .strictObject({
    notify: z
      .array(Kind)
      .max(LINE_NOTICE_KINDS.length * 2)
      .optional(),
    quietHours: QuietHoursSchema.nullable().optional(),
    timeZone: z.string().min(1).max(64).optional().openapi({ description: "An IANA time zone" }),
  })
  .openapi("MyLinePreferences");

const quietOf = (row: LineMemberRow) =>
  row.quietStartMinute === null || row.quietEndMinute === null
    ? null
    : { start: clockOf(row.quietStartMinute), end: clockOf(row.quietEndMinute) };

const ALL_KINDS = [...LINE_NOTICE_KINDS];

export function myNumberResource(companyId: string, row: LineMemberRow | undefined, now: number) {
  const pending = row?.codeHash != null && (row.codeExpiresAt ?? 0) > now;
  return {
    companyId,
    phone: row?.phone ?? null,
    verified: row?.verifiedAt != null,
    verifiedAt: row?.verifiedAt != null ? iso(row.verifiedAt) : null,
    codePending: pending,
    codeExpiresAt: pending && row?.codeExpiresAt != null ? iso(row.codeExpiresAt) : null,
    notify: row?.notify ?? ALL_KINDS,
    quietHours: row ? quietOf(row) : null,
    timeZone: row?.timeZone ?? "UTC",
  };
}

export const masked = (phone: string) => `${"•".repeat(Math.max(0, phone.length - 4))}${phone.slice(-4)}`;

export function lineMemberResource(
  member: { userId: string; name: string; role: MembershipRole },
  row: LineMemberRow | null,
) {
  return {
    ...member,
    phone: row ? masked(row.phone) : null,
    verified: row?.verifiedAt != null,
    notify: row?.notify ?? ALL_KINDS,
    quietHours: row ? quietOf(row) : null,
    timeZone: row?.timeZone ?? "UTC",
  };
}
