/**
 * Crash injection for tests (issue 31): while a `loseAnnouncements()` is in force, what a writer
 * sends its company's feed after its commit (a new issue, the IssueDO's relay of a change the board
 * shows, notifications, a blocker's news) is dropped, as if the isolate died between the commit and
 * the announcement. The tests show the change still reaches every open board and stream exactly once.
 * Nothing outside the tests calls it, so in production the check is one comparison.
 */
let losing = 0;

/** Starts dropping announcements; the function returned stops (once). */
export function loseAnnouncements(): () => void {
  losing++;
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    losing--;
  };
}

/** Whether announcements are being dropped now (always false outside a crash test). */
export const announcementsLost = (): boolean => losing > 0;
