// First, before any module builds a zod schema: @hono/zod-openapi adds `.openapi()` to zod schemas
// created after it loads, and the bridge's shared schemas (bridge/src/*) are built with plain zod.
import "@hono/zod-openapi";
import { createApp } from "./app";
import { closeEndedWindows } from "./control/budgets";
import { recomputeAllSpend } from "./control/costs";
import { pruneExpiredActivity } from "./control/events/log";
import { queueDueDigests, sendAllDueNotices } from "./control/line";
import { fireDueSchedules } from "./control/routines";
import { runnerCron } from "./control/runs";
import type { Env } from "./core/env";
import { database } from "./db/client";
import { sealLegacyRemoveBgKeys } from "./gateway/sessions";
import { sealLegacyWebhookSecrets } from "./gateway/webhooks";

export { CompanyFeed } from "../durable-objects/company-feed";
export { BridgeFleet } from "../durable-objects/fleet";
export { IssueDO } from "../durable-objects/issue";
export { Keyring } from "../durable-objects/keyring";
export { McpSession } from "../durable-objects/mcp-session";
export { RunDispatcher } from "../durable-objects/run-dispatcher";
export { SessionDO } from "../durable-objects/session";

const app = createApp();

export default {
  fetch: app.fetch,
  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
    const db = database(env.DB);
    await fireDueSchedules(env, controller.scheduledTime);
    await runnerCron(env, db, controller.scheduledTime);
    // Stored monthly spend changes only with cost events; at the top of each hour it is recomputed,
    // so a new month starts every agent and company at its real (zero) spend, and last month's
    // budget incidents close.
    if (new Date(controller.scheduledTime).getUTCMinutes() === 0) {
      await recomputeAllSpend(db, controller.scheduledTime);
      await closeEndedWindows(db, controller.scheduledTime).run();
      // The activity log (companies' events) past the deployment's retention, when it set one.
      await pruneExpiredActivity(db, env.ACTIVITY_RETENTION_DAYS, controller.scheduledTime);
    }
    // Members' daily digests whose 09:00 (their time zone) has come, then every due notice goes out.
    await queueDueDigests(db, controller.scheduledTime);
    // The company line's notices that are due: queued while the line was down, after quiet hours, a
    // rate limit, or queued where no request was at hand (a run that failed).
    await sendAllDueNotices(env, async (request) => app.fetch(request, env, ctx), controller.scheduledTime);
    // Webhook secrets stored in plaintext before migration 0010, a batch a minute until none is left.
    await sealLegacyWebhookSecrets(env);
    // Bot remove.bg keys stored in plaintext before they were sealed, likewise.
    await sealLegacyRemoveBgKeys(env);
  },
} satisfies ExportedHandler<Env>;
