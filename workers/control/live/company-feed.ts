import type { Env } from "../../core/env";
import { namespaceOf } from "../../core/env";
import type { LiveChange, LiveInterest } from "./events";
import { interestParam } from "./feed";
import { announcementsLost } from "./lost-announcements";

/**
 * What the Worker asks of a company's CompanyFeed (durable-objects/company-feed.ts implements it):
 * the board's live socket (`fetch` with an upgrade, `?since=N`), nudges after a logged change, and
 * the changes it relays as they are.
 */
export interface CompanyFeedObject extends Rpc.DurableObjectBranded {
  /**
   * The company's activity log has news: the board and the event streams read it now. Answers whether
   * anyone listens (a board page or an event stream is open).
   */
  nudge(companyId: string): Promise<boolean>;
  /** A change the log does not hold (a notification, an issue-less run's progress), told as is. */
  publish(change: LiveChange): Promise<void>;
}

/** Name it only with a company id the caller was shown to see (or a row's own companyId). */
export const companyFeed = (env: Env, companyId: string): DurableObjectStub<CompanyFeedObject> =>
  namespaceOf<CompanyFeedObject>(env.COMPANY_FEED).getByName(companyId);

/**
 * The upgrade request a feed's object answers (the Worker checked the caller and the Origin, and noted
 * the socket with `noteLiveSocket`); `owner` is the caller's `ownerTag`, so a revocation can close it;
 * `feed` names the feed in an object that hosts many (an IssueDO: the id; `feedKeyOf`).
 */
export function watchRequest(
  since: number | undefined,
  interest: LiveInterest = "all",
  owner: string | null = null,
  feed: string | null = null,
): Request {
  const url = new URL("https://live/watch");
  if (owner !== null) url.searchParams.set("who", owner);
  if (feed !== null) url.searchParams.set("feed", feed);
  if (since !== undefined) url.searchParams.set("since", String(since));
  const only = interestParam(interest);
  if (only !== null) url.searchParams.set("only", only);
  return new Request(url, { headers: { Upgrade: "websocket" } });
}

/**
 * How long this isolate skips the nudges of a company whose feed answered that nobody listens. A page
 * or stream opened meanwhile reads the log when it opens and then looks every second, so skipping
 * costs it at most that second for this long; a busy company with nobody watching is spared a
 * Durable Object call on almost every write (issue 31: one hop less per create and checkout).
 */
export const UNWATCHED_MEMORY_MS = 2_000;
/** Companies remembered at most; past it the memory starts again (it is only a saving). */
const UNWATCHED_KEPT = 10_000;
const unwatchedUntil = new Map<string, number>();

/** Whether this isolate skips the company's nudges now (the write budget tests wait for it). */
export const nudgesSkipped = (companyId: string): boolean =>
  (unwatchedUntil.get(companyId) ?? 0) > Date.now();

function rememberUnwatched(companyId: string): void {
  if (unwatchedUntil.size >= UNWATCHED_KEPT) unwatchedUntil.clear();
  unwatchedUntil.set(companyId, Date.now() + UNWATCHED_MEMORY_MS);
}

/**
 * Tells the company's board and event streams that its activity log has news (a change committed
 * outside any IssueDO: the create route, routines). Only a nudge: they read the log itself, so a
 * nudge lost to a crash costs them a second, not the change. A failure is logged, never the writer's.
 */
export async function nudgeCompanyFeed(env: Env, companyId: string): Promise<void> {
  if (announcementsLost()) return;
  if (nudgesSkipped(companyId)) return;
  try {
    const watched = await companyFeed(env, companyId).nudge(companyId);
    if (watched) unwatchedUntil.delete(companyId);
    else rememberUnwatched(companyId);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", msg: "board nudge failed", error: String(error) }));
  }
}

/**
 * Tells the company's open pages that these users got a notification (after its batch committed),
 * one event per recipient. A failure is logged: the notification is stored whether or not a page hears.
 */
export async function announceNotifications(env: Env, companyId: string, userIds: readonly string[]) {
  if (announcementsLost()) return;
  try {
    const feed = companyFeed(env, companyId);
    for (const userId of userIds) await feed.publish({ kind: "notification.created", companyId, userId });
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", msg: "notification announcement failed", error: String(error) }),
    );
  }
}
