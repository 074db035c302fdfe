/**
 * Heartbeat runs on runners: what the RunDispatcher does with runner frames (claim, log, finish,
 * link lost), the environment a run receives, heartbeat timers and the cron sweep. HTTP in routes.ts.
 *
 * This index is what the rest of the code may import from here.
 */
export { claimNextRun, type RunnerLink } from "./claim";
export { missingCommand } from "./environment";
export { attemptHttpWake, expireHttpWake, type HttpWake, startHttpRuns } from "./http-adapter";
export { failLinkRuns, finishRun, linkHoldsRun, logsComplete, recordLog, touchRuns } from "./lifecycle";
export { LogAnnouncer } from "./live";
export { OutputRedactor } from "./redaction";
export { runnerCron } from "./timers";
export { recordEvent } from "./transcript";
export { closedIssueIds } from "./workspace";
