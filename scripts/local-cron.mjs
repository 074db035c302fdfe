// The cron trigger of `npm start` and `npm run serve`: the Worker's scheduled handler, every minute on
// the minute, with the scheduled time Cloudflare would give it (wrangler.toml [triggers] crons). In
// production Cloudflare fires it; locally nothing would (routines, heartbeat timers, the runner-lost
// sweep and the hourly spend recompute all hang off it), so this process does.

const MINUTE_MS = 60_000;
/** The one schedule in wrangler.toml. */
const CRON = "* * * * *";

/** The next whole minute after `now`. */
export const nextMinute = (now) => Math.floor(now / MINUTE_MS) * MINUTE_MS + MINUTE_MS;

/**
 * Calls `<baseUrl>/cdn-cgi/handler/scheduled` (workerd's trigger path, on for local development only)
 * at each whole minute until stop(). A failed tick is logged and the next one happens as usual.
 * @param {{ baseUrl: string, log: (message: string) => void }} options
 */
export function startLocalCron({ baseUrl, log }) {
  let timer;
  let stopped = false;
  const fire = async (scheduledTime) => {
    const url = `${baseUrl}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent(CRON)}&time=${scheduledTime}`;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(MINUTE_MS - 5_000) });
      await response.body?.cancel();
      if (!response.ok) log(`cron: the scheduled handler answered ${response.status}`);
    } catch (error) {
      if (!stopped) log(`cron: the scheduled handler did not answer (${error.message})`);
    }
  };
  const schedule = () => {
    if (stopped) return;
    const at = nextMinute(Date.now());
    timer = setTimeout(() => {
      void fire(at);
      schedule();
    }, at - Date.now());
  };
  schedule();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
