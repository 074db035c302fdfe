import type { Env } from "../../core/env";
import { namespaceOf } from "../../core/env";
import type { LiveChange, LiveInterest } from "./events";
import { interestParam } from "./feed";

/**
 * What the Worker asks of a company's CompanyFeed (durable-objects/company-feed.ts implements it):
 * the board's live socket (`fetch` with an upgrade, `?since=N`) and the changes it relays.
 */
export interface CompanyFeedObject extends Rpc.DurableObjectBranded {
  publish(change: LiveChange): Promise<void>;
}

/** Name it only with a company id the caller was shown to see (or a row's own companyId). */
export const companyFeed = (env: Env, companyId: string): DurableObjectStub<CompanyFeedObject> =>
  namespaceOf<CompanyFeedObject>(env.COMPANY_FEED).getByName(companyId);

/**
 * The upgrade request a feed's object answers (the Worker checked the caller and the Origin, and noted
 * the socket with `noteLiveSocket`); `owner` is the caller's `ownerTag`, so a revocation can close it.
 */
export function watchRequest(
  since: number | undefined,
  interest: LiveInterest = "all",
  owner: string | null = null,
): Request {
  const url = new URL("https://live/watch");
  if (owner !== null) url.searchParams.set("who", owner);
  if (since !== undefined) url.searchParams.set("since", String(since));
  const only = interestParam(interest);
  if (only !== null) url.searchParams.set("only", only);
  return new Request(url, { headers: { Upgrade: "websocket" } });
}

type NewIssueFields = {
  id: string;
  companyId: string;
  status: string;
  title: string;
  assigneeAgentId: string | null;
  assigneeUserId: string | null;
};

/**
 * Tells the company's board about an issue created outside any IssueDO (the create route, routines),
 * after its batch committed. A failure is logged, never the creator's error: the issue exists.
 */
export async function announceNewIssue(env: Env, issue: NewIssueFields): Promise<void> {
  const { id, companyId, status, title, assigneeAgentId, assigneeUserId } = issue;
  try {
    await companyFeed(env, companyId).publish({
      kind: "issue.created",
      companyId,
      issueId: id,
      status,
      title,
      assigneeAgentId,
      assigneeUserId,
    });
  } catch (error) {
    console.error(JSON.stringify({ level: "error", msg: "board announcement failed", error: String(error) }));
  }
}

/**
 * Tells the company's open pages that these users got a notification (after its batch committed),
 * one event per recipient. A failure is logged: the notification is stored whether or not a page hears.
 */
export async function announceNotifications(env: Env, companyId: string, userIds: readonly string[]) {
  try {
    const feed = companyFeed(env, companyId);
    for (const userId of userIds) await feed.publish({ kind: "notification.created", companyId, userId });
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", msg: "notification announcement failed", error: String(error) }),
    );
  }
}
