import type { OutgoingContent } from "../../../bridge/src/protocol/messaging";
import { contentFromUrl } from "../media/from-url";
import { cronProblem, isTimeZone, parseSendAt } from "./time";

/** What a scheduled message sends: a text, or media by URL with an optional caption. */

export const MEDIA_KINDS = ["image", "video", "document", "audio"] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/** A `sendAt` this far in the past is still accepted (clock skew); older ones are a mistake. */
export const PAST_TOLERANCE_MS = 60_000;

/** The fields a caller sets, as the API names them. */
export interface ScheduleFields {
  jid: string;
  content: string | null;
  mediaUrl: string | null;
  mediaType: MediaKind | null;
  fileName: string | null;
  timezone: string;
  cronExpression: string | null;
}

export type ScheduleInput = Partial<ScheduleFields> & { sendAt?: string };

/** A complete, checked schedule: the fields plus the first fire time as an instant. */
export type ResolvedSchedule = ScheduleFields & { sendAt: number };

/**
 * Checks a whole schedule (a create, or a stored row with an update applied). `sendAt` is read in the
 * resulting timezone; without a new `sendAt`, `storedSendAt` (an instant) stays as it is.
 */
export function resolveSchedule(
  fields: ScheduleFields,
  sendAtText: string | undefined,
  storedSendAt: number | null,
  now: number,
): { ok: true; schedule: ResolvedSchedule } | { ok: false; error: string } {
  const fail = (error: string) => ({ ok: false as const, error });
  if (!isTimeZone(fields.timezone)) return fail(`timezone: unknown IANA time zone "${fields.timezone}"`);
  if (fields.content === null && fields.mediaUrl === null) return fail("content or mediaUrl is required");
  if (fields.mediaType !== null && fields.mediaUrl === null) return fail("mediaType needs a mediaUrl");
  const kind = fields.mediaUrl === null ? null : (fields.mediaType ?? "image");
  if (kind === "audio" && fields.content !== null) return fail("content: audio messages carry no caption");
  if (fields.fileName !== null && kind !== "document") return fail("fileName applies to documents only");
  let sendAt = storedSendAt;
  if (sendAtText !== undefined) {
    sendAt = parseSendAt(sendAtText, fields.timezone);
    if (sendAt === null) {
      return fail("sendAt: an ISO 8601 date-time, with an offset or local to `timezone` (2026-05-01T09:00)");
    }
    if (sendAt < now - PAST_TOLERANCE_MS) {
      return fail(`sendAt: ${new Date(sendAt).toISOString()} is in the past (check the timezone)`);
    }
  }
  if (sendAt === null) return fail("sendAt is required");
  if (fields.cronExpression !== null) {
    const problem = cronProblem(fields.cronExpression, fields.timezone, now);
    if (problem) return fail(`cronExpression: ${problem}`);
  }
  return { ok: true, schedule: { ...fields, mediaType: kind, sendAt } };
}

export function outgoingContent(
  schedule: Pick<ScheduleFields, "content" | "mediaUrl" | "mediaType" | "fileName">,
): OutgoingContent {
  const { content, mediaUrl } = schedule;
  if (mediaUrl === null) return { type: "text", text: content ?? "" };
  return contentFromUrl(schedule.mediaType ?? "image", mediaUrl, content, schedule.fileName);
}
