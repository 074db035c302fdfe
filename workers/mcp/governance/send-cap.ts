import { and, eq, sql } from "drizzle-orm";
import type { Env } from "../../core/env";
import { database } from "../../db/client";
import { agentDailySends, companyMcpSettings } from "../../db/schema";

/**
 * The per-agent daily cap on WhatsApp sends through MCP (docs/mcp.md "Governance"): counted per UTC
 * day in D1, reserved before the send by one conditional upsert (two agents' or two calls' races
 * cannot both take the last send) and given back when the send fails. An agent's scheduled message
 * takes it when it goes out (durable-objects/messaging/scheduler/agent-sends.ts).
 */
/** The cap when the board set none. */
export const DEFAULT_DAILY_SEND_CAP = 50;

/** The company's cap now: what it set, else the default. */
export async function dailySendCapOf(env: Env, companyId: string): Promise<number> {
  const row = await database(env.DB)
    .select({ cap: companyMcpSettings.dailySendCap })
    .from(companyMcpSettings)
    .where(eq(companyMcpSettings.companyId, companyId))
    .get();
  return row?.cap ?? DEFAULT_DAILY_SEND_CAP;
}

export const utcDay = (now: number): string => new Date(now).toISOString().slice(0, 10);

const nextUtcMidnight = (now: number): string => `${utcDay(now + 86_400_000)}T00:00:00.000Z`;

/** Why a send was refused, as the REST API would answer it (the tool's answer). */
export interface SendRefusal {
  status: number;
  body: { error: string };
}

/**
 * Takes one send of today's allowance; `enforce: false` (a send the board approved) counts it
 * whatever the count. A refusal is the tool's answer: it names the cap and when it resets.
 */
export async function reserveSend(
  env: Env,
  agentId: string,
  cap: number,
  options: { enforce: boolean; now?: number },
): Promise<{ ok: true; day: string } | { ok: false; answer: SendRefusal }> {
  const now = options.now ?? Date.now();
  const day = utcDay(now);
  const below = options.enforce ? sql`${agentDailySends.count} < ${cap}` : sql`1`;
  const taken = await database(env.DB)
    .insert(agentDailySends)
    .values({ agentId, day, count: 1 })
    .onConflictDoUpdate({
      target: [agentDailySends.agentId, agentDailySends.day],
      set: { count: sql`${agentDailySends.count} + 1` },
      setWhere: below,
    })
    .returning({ count: agentDailySends.count })
    .get();
  // A first send of the day inserts count 1, which a cap of 0 must refuse too.
  if (taken && (!options.enforce || taken.count <= cap)) return { ok: true, day };
  if (taken) await refundSend(env, agentId, day);
  return {
    ok: false,
    answer: {
      status: 429,
      body: {
        error:
          `Daily send cap reached: agents of this company may send ${cap} WhatsApp messages per UTC day, ` +
          `and you have sent ${cap} today. It resets at ${nextUtcMidnight(now)}. Do not retry before then; ` +
          "tell the board if more sends are needed (it sets the cap in the company's MCP policy).",
      },
    },
  };
}

/** Gives back a reserved send that did not happen. */
export async function refundSend(env: Env, agentId: string, day: string): Promise<void> {
  await database(env.DB)
    .update(agentDailySends)
    .set({ count: sql`max(${agentDailySends.count} - 1, 0)` })
    .where(and(eq(agentDailySends.agentId, agentId), eq(agentDailySends.day, day)));
}
