import { createRoute } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { refOf } from "../../core/actor";
import { issues, routines } from "../../db/schema";
import { controlAuth, controlErrors, createRouter } from "../../http/openapi";
import { activityInsert, controlContext, requireBoard } from "../shared";
import { RoutineParamSchema } from "./schemas";
import { visibleRoutine } from "./store";

/** DELETE /routines/{routineId}: board only; agents pause or archive their routines instead. */
export const routineDeleteRoutes = createRouter();

routineDeleteRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/routines/{routineId}",
    tags: ["Routines"],
    summary: "Delete a routine (board only)",
    description:
      "Deletes the routine with its triggers (webhook URLs stop working at once) and its run history. " +
      "Issues it created stay, with originRoutineId null. To stop it but keep the history, archive it.",
    security: controlAuth,
    request: { params: RoutineParamSchema },
    responses: { 204: { description: "Deleted" }, ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const routine = await visibleRoutine(db, actor, c.req.valid("param").routineId);
    requireBoard(actor, "delete routines; agents archive them (PATCH status archived)");
    const now = Date.now();
    await db.batch([
      // The execution issues are ordinary work now; no IssueDO holds origin_routine_id in its state.
      db
        .update(issues)
        .set({ originRoutineId: null, updatedAt: now })
        .where(eq(issues.originRoutineId, routine.id)),
      activityInsert(
        db,
        {
          companyId: routine.companyId,
          actor: refOf(actor),
          action: "routine.deleted",
          entityType: "routine",
          entityId: routine.id,
          details: { title: routine.title },
        },
        now,
      ),
      db.delete(routines).where(eq(routines.id, routine.id)),
    ]);
    return c.body(null, 204);
  },
);
