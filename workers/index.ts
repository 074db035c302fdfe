// First, before any module builds a zod schema: @hono/zod-openapi adds `.openapi()` to zod schemas
// created after it loads, and the bridge's shared schemas (bridge/src/*) are built with plain zod.
import "@hono/zod-openapi";
import { createApp } from "./app";
import { runnerCron } from "./control/heartbeat-timers";
import { fireDueSchedules } from "./control/routine-scheduler";
import { database } from "./db/client";
import type { Env } from "./env";

export { BridgeFleet } from "../durable-objects/fleet";
export { IssueDO } from "../durable-objects/issue";
export { Keyring } from "../durable-objects/keyring";
export { RunDispatcher } from "../durable-objects/run-dispatcher";
export { SessionDO } from "../durable-objects/session";

const app = createApp();

export default {
  fetch: app.fetch,
  async scheduled(controller: ScheduledController, env: Env, _ctx: ExecutionContext): Promise<void> {
    await fireDueSchedules(env, controller.scheduledTime);
    await runnerCron(env, database(env.DB), controller.scheduledTime);
  },
} satisfies ExportedHandler<Env>;
