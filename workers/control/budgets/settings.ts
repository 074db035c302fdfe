import { and, eq } from "drizzle-orm";
import { agentCredentialsChanged } from "../../auth/agent-key-store";
import type { ActorRef } from "../../core/actor";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { agents, budgetPolicies, companies, projects } from "../../db/schema";
import { notFound } from "../../http/errors";
import { activityInsert } from "../shared";
import { holdOverBudget } from "./enforce";
import { settleIncidents, thresholdReached } from "./incidents";
import { type BudgetKey, type BudgetState, isRowBudget, spendQuery } from "./store";

/** The scope must be the company itself, or a project or agent of it: 404 otherwise, as any other id. */
async function assertScope(db: Db, key: BudgetKey): Promise<void> {
  if (key.scope === "company") return;
  const table = key.scope === "project" ? projects : agents;
  const row = await db
    .select({ id: table.id })
    .from(table)
    .where(and(eq(table.id, key.scopeId), eq(table.companyId, key.companyId)))
    .get();
  if (!row) throw notFound(`${key.scope === "project" ? "Project" : "Agent"} not found`);
}

/** Writes the amount where the budget lives (the agent's or company's row, or a policy row; 0 removes a policy). */
async function writeAmount(db: Db, key: BudgetKey, amountCents: number, now: number): Promise<void> {
  if (isRowBudget(key)) {
    const table = key.scope === "agent" ? agents : companies;
    await db
      .update(table)
      .set({ budgetMonthlyCents: amountCents, updatedAt: now })
      .where(eq(table.id, key.scopeId));
    return;
  }
  const where = and(
    eq(budgetPolicies.companyId, key.companyId),
    eq(budgetPolicies.scopeType, key.scope),
    eq(budgetPolicies.scopeId, key.scopeId),
    eq(budgetPolicies.window, key.window),
  );
  if (amountCents === 0) await db.delete(budgetPolicies).where(where);
  else
    await db
      .insert(budgetPolicies)
      .values({ id: newId(), ...key, scopeType: key.scope, amountCents, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: [
          budgetPolicies.companyId,
          budgetPolicies.scopeType,
          budgetPolicies.scopeId,
          budgetPolicies.window,
        ],
        set: { amountCents, updatedAt: now },
      });
}

/** What the budget's scope spent in its current window (as the budget counts it, set or not). */
export async function currentSpend(db: Db, key: BudgetKey, now: number): Promise<number> {
  if (isRowBudget(key)) {
    const table = key.scope === "agent" ? agents : companies;
    const row = await db
      .select({ spent: table.spentMonthlyCents })
      .from(table)
      .where(eq(table.id, key.scopeId))
      .get();
    return row?.spent ?? 0;
  }
  return (await spendQuery(db, key, now).get())?.total ?? 0;
}

/**
 * Sets a budget (0 removes it) and settles its incidents at once: those the new amount no longer
 * reaches are resolved (`raised`, or `removed` at 0), freeing the runs they held; an amount at or
 * under the spend opens the incident (and for a project's or lifetime budget, stops its runs) now,
 * not at the next cost event. `resume`: an agent paused for its budget, no longer over it, goes back
 * to idle. Returns the budget's state.
 */
export async function setBudget(
  env: Env,
  db: Db,
  key: BudgetKey,
  amountCents: number,
  by: { actor: ActorRef; userId: string | null; resume: boolean },
  now: number,
): Promise<BudgetState> {
  await assertScope(db, key);
  const spentCents = await currentSpend(db, key, now);
  await writeAmount(db, key, amountCents, now);
  const state: BudgetState = { ...key, amountCents, spentCents, policyId: null };
  await db.batch([
    settleIncidents(db, key, state, by.userId, now),
    activityInsert(
      db,
      {
        companyId: key.companyId,
        actor: by.actor,
        action: "budget.updated",
        entityType: key.scope,
        entityId: key.scopeId,
        details: { budget: key.scope, window: key.window, amountCents },
      },
      now,
    ),
  ]);
  await holdOverBudget(
    env,
    db,
    key.companyId,
    [state],
    { costEventId: null, actor: by.actor, finishing: null },
    now,
  );
  if (by.resume && key.scope === "agent" && thresholdReached(state) !== "hard")
    await resumeBudgetPaused(env, db, key, by.actor, now);
  return state;
}

/** An agent paused for its budget back to idle (the incident resolution's resume). */
async function resumeBudgetPaused(
  env: Env,
  db: Db,
  key: BudgetKey,
  actor: ActorRef,
  now: number,
): Promise<void> {
  const [resumed] = await db
    .update(agents)
    .set({ status: "idle", pauseReason: null, updatedAt: now })
    .where(and(eq(agents.id, key.scopeId), eq(agents.status, "paused"), eq(agents.pauseReason, "budget")))
    .returning({ id: agents.id });
  if (!resumed) return;
  await activityInsert(
    db,
    {
      companyId: key.companyId,
      actor,
      action: "agent.resumed",
      entityType: "agent",
      entityId: key.scopeId,
      details: { pauseReason: "budget" },
    },
    now,
  ).run();
  await agentCredentialsChanged(env, key.scopeId);
}
