import { mediaKey, metaOf, sessionMediaPrefix } from "../../../workers/media/objects";
import { readConfigCopy } from "../config/session";
import type { SessionContext, TimedWork } from "../context";
import { forgetMedia, UPLOAD_TTL_MS } from "./store";

/**
 * How long a session keeps media in R2: received files `mediaRetentionDays` (default 30) after they
 * were fetched, uploads an hour unless sent first. A sweep runs at most daily, from the session's own
 * alarm: it removes expired files and their rows, and any object under the session's prefix that has
 * no row and is as old (a write whose Worker died before the row was written). A file swept away is
 * fetched from WhatsApp again on the next download while WhatsApp still has it.
 */
export const DEFAULT_MEDIA_RETENTION_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Objects listed per sweep: what is left waits for the next day's. */
const SWEEP_LIST_PAGES = 10;

function retentionMs(ctx: SessionContext): number {
  const days = readConfigCopy(ctx.sql)?.settings.mediaRetentionDays ?? DEFAULT_MEDIA_RETENTION_DAYS;
  return days * DAY_MS;
}

const lastSweep = (sql: SqlStorage): number =>
  sql.exec<{ at: number }>("SELECT at FROM media_sweep WHERE k = 1").toArray()[0]?.at ?? 0;

/** When the oldest stored file expires (null with no file stored). */
function oldestExpiry(ctx: SessionContext): number | null {
  const row = ctx.sql
    .exec<{ upload: number | null; download: number | null }>(
      `SELECT min(CASE WHEN kind = 'upload' THEN created_at END) AS upload,
              min(CASE WHEN kind <> 'upload' THEN created_at END) AS download FROM media`,
    )
    .one();
  const times = [
    row.upload === null ? null : row.upload + UPLOAD_TTL_MS,
    row.download === null ? null : row.download + retentionMs(ctx),
  ].filter((at): at is number => at !== null);
  return times.length === 0 ? null : Math.min(...times);
}

/** Removes what has expired; answers how many files went. */
export async function sweepMedia(ctx: SessionContext): Promise<number> {
  const now = ctx.now();
  ctx.sql.exec("INSERT OR REPLACE INTO media_sweep (k, at) VALUES (1, ?)", now);
  const keep = retentionMs(ctx);
  const expired = ctx.sql
    .exec<{ ref: string }>(
      `SELECT ref FROM media WHERE (kind = 'upload' AND created_at < ?) OR (kind <> 'upload' AND created_at < ?)`,
      now - UPLOAD_TTL_MS,
      now - keep,
    )
    .toArray()
    .map((row) => row.ref);
  for (let i = 0; i < expired.length; i += 1000) {
    const batch = expired.slice(i, i + 1000);
    await ctx.env.MEDIA.delete(batch.map((ref) => mediaKey(ctx.sessionId, ref)));
    for (const ref of batch) forgetMedia(ctx.sql, ref);
  }
  return expired.length + (await sweepUnnamed(ctx, now, keep));
}

/** R2 lists an object's custom metadata only when asked (the workers-types copy here predates `include`). */
type ListWithMetadata = R2ListOptions & { include: Array<"httpMetadata" | "customMetadata"> };

/** Objects with no row (never named, or named and then forgotten) past their kind's retention. */
async function sweepUnnamed(ctx: SessionContext, now: number, keep: number): Promise<number> {
  const prefix = sessionMediaPrefix(ctx.sessionId);
  let cursor: string | undefined;
  let removed = 0;
  for (let page = 0; page < SWEEP_LIST_PAGES; page++) {
    const options: ListWithMetadata = { prefix, include: ["customMetadata"], ...(cursor ? { cursor } : {}) };
    const listing = await ctx.env.MEDIA.list(options);
    const stale = listing.objects.filter((object) => {
      const { kind, uploaded } = metaOf(object);
      const named = ctx.sql
        .exec("SELECT 1 FROM media WHERE ref = ?", object.key.slice(prefix.length))
        .toArray();
      return named.length === 0 && uploaded < now - (kind === "upload" ? UPLOAD_TTL_MS : keep);
    });
    if (stale.length > 0) await ctx.env.MEDIA.delete(stale.map((object) => object.key));
    removed += stale.length;
    if (!listing.truncated) break;
    cursor = listing.cursor;
  }
  return removed;
}

/** Every object of a deleted session. */
export async function deleteAllMedia(env: { MEDIA: R2Bucket }, sessionId: string): Promise<void> {
  const prefix = sessionMediaPrefix(sessionId);
  for (;;) {
    const listing = await env.MEDIA.list({ prefix });
    if (listing.objects.length > 0) await env.MEDIA.delete(listing.objects.map((object) => object.key));
    if (!listing.truncated) return;
  }
}

export const mediaRetentionWork: TimedWork = {
  next: (ctx) => {
    const expiry = oldestExpiry(ctx);
    return expiry === null ? null : Math.max(expiry, lastSweep(ctx.sql) + DAY_MS);
  },
  run: async (ctx) => {
    await sweepMedia(ctx);
  },
};

/** The session's alarm set no later than the sweep the files it holds now call for. */
export async function armRetention(ctx: SessionContext): Promise<void> {
  const at = mediaRetentionWork.next(ctx);
  if (at !== null) await ctx.wake(at);
}
