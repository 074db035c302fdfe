import { createRoute, z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { refOf } from "../../core/actor";
import type { Db } from "../../db/client";
import { heartbeatRuns } from "../../db/schema";
import { conflict } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json } from "../../http/openapi";
import { agentWithCompany, authorize, RunSchema } from "../agents";
import { activityInsert, controlContext, ensureVisible } from "../shared";
import { runDispatcher } from "../wakes";
import { announceRun } from "./live";
import { runResources } from "./resources";

/** Cancelling a heartbeat run: a queued one at once, a running one by stopping its process group. */
export const runCancelRoutes = createRouter();

runCancelRoutes.openapi(
  createRoute({
    method: "post",
    path: "/heartbeat-runs/{runId}/cancel",
    tags: ["Heartbeat runs"],
    summary: "Cancel a run (board; managers above its agent)",
    description:
      "A queued run is cancelled at once (200). A running one is asked to stop (202): its runner stops " +
      "the whole process group (SIGTERM, then SIGKILL after 3 s) and the run ends `cancelled` within " +
      "seconds, releasing the issues it held. A run that already ended answers 409.",
    security: controlAuth,
    request: { params: z.object({ runId: z.uuid() }) },
    responses: {
      200: json(RunSchema, "Cancelled"),
      202: json(RunSchema, "Stopping: it ends cancelled when its process is gone"),
      ...controlErrors,
      409: controlError("The run already ended"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const runId = c.req.valid("param").runId;
    const row = await db.select().from(heartbeatRuns).where(eq(heartbeatRuns.id, runId)).get();
    const run = await ensureVisible(db, actor, row, "Run");
    const { agent, byId } = await agentWithCompany(db, actor, run.agentId);
    authorize(actor, agent, byId, ["ancestor"], "cancel this agent's runs");
    const now = Date.now();
    const ended = await (run.status === "queued"
      ? cancelQueued(db, run.id, now)
      : askToStop(db, run.id, now));
    if (!ended) throw conflict(`The run already ended (${run.status})`);
    await activityInsert(
      db,
      {
        companyId: run.companyId,
        actor: refOf(actor),
        action: ended.status === "cancelled" ? "heartbeat_run.cancelled" : "heartbeat_run.cancel_requested",
        entityType: "heartbeat_run",
        entityId: run.id,
        details: { agentId: run.agentId },
      },
      now,
    );
    if (ended.status === "cancelled") {
      await announceRun(c.env, ended, "run.ended");
      return c.json((await runResources(db, [ended]))[0], 200);
    }
    if (ended.runnerLinkId) await runDispatcher(c.env).cancelRun(ended.id, ended.runnerLinkId);
    return c.json((await runResources(db, [ended]))[0], 202);
  },
);

/** A queued run, cancelled (undefined if it left the queue meanwhile). */
async function cancelQueued(db: Db, runId: string, now: number) {
  const [row] = await db
    .update(heartbeatRuns)
    .set({ status: "cancelled", errorReason: "cancelled", finishedAt: now })
    .where(and(eq(heartbeatRuns.id, runId), eq(heartbeatRuns.status, "queued")))
    .returning();
  return row;
}

/** A running run, marked for cancelling (undefined if it ended meanwhile). */
async function askToStop(db: Db, runId: string, now: number) {
  const [row] = await db
    .update(heartbeatRuns)
    .set({ cancelRequestedAt: now })
    .where(and(eq(heartbeatRuns.id, runId), eq(heartbeatRuns.status, "running")))
    .returning();
  return row;
}
