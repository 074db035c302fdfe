/**
 * Live updates for the dashboard: numbered change feeds with hibernatable sockets (feed.ts), hosted by
 * each IssueDO (its issue) and by a CompanyFeed per company (its board). Writers publish after their
 * commit; the board's issue events are read from the activity log and writers only nudge it
 * (control/events/board.ts). See docs/decisions.md "Live pages" and "The board follows the activity log".
 *
 * This index is what the rest of the code may import from here.
 */
export {
  announceNotifications,
  type CompanyFeedObject,
  companyFeed,
  nudgeCompanyFeed,
  nudgesSkipped,
  watchRequest,
} from "./company-feed";
export {
  isBoardChange,
  type LiveChange,
  type LiveChangeKind,
  type LiveFrame,
  type LiveInterest,
} from "./events";
export { closeViewer, feedKeyOf, interestOf, LIVE_EVENTS_KEPT, LiveFeed, sinceOf } from "./feed";
export { keyedFeedLogs } from "./feed-log";
export { announcementsLost, loseAnnouncements } from "./lost-announcements";
