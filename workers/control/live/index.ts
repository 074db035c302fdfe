/**
 * Live updates for the dashboard: numbered change feeds with hibernatable sockets (feed.ts), hosted by
 * each IssueDO (its issue) and by a CompanyFeed per company (its board). Writers publish after their
 * commit; see docs/decisions.md "Live pages".
 *
 * This index is what the rest of the code may import from here.
 */
export {
  announceNewIssue,
  announceNotifications,
  type CompanyFeedObject,
  companyFeed,
  watchRequest,
} from "./company-feed";
export {
  isBoardChange,
  type LiveChange,
  type LiveChangeKind,
  type LiveFrame,
  type LiveInterest,
} from "./events";
export { closeViewer, interestOf, LIVE_EVENTS_KEPT, LiveFeed, sinceOf } from "./feed";
