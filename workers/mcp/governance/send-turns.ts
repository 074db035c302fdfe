import { eq, sql } from "drizzle-orm";
import { broadcastGap, pickGap } from "../../../durable-objects/messaging/broadcasts/gap";
import type { Env } from "../../core/env";
import { database } from "../../db/client";
import { lineSendSlots } from "../../db/schema";

/**
 * Turns of agents' sends on one session (docs/mcp.md "Governance"), so no agent can flood a number:
 * consecutive agent sends on a session are spaced like broadcast sends (BROADCAST_GAP_MS, by default a
 * random 10–20 s; production never goes below that), each after "typing…" shown for TYPING_MS. The
 * next free moment per session is one D1 row, moved by one upsert, so concurrent sends queue behind
 * each other. A turn further away than MAX_WAIT_MS is not taken (the caller retries later). The
 * waiting and the typing are the caller's: the MCP send tools (mcp/tools/send-pacing.ts) and an
 * agent's scheduled message (durable-objects/messaging/scheduler/agent-sends.ts).
 */
export const MAX_WAIT_MS = 60_000;
/** How long "typing…" shows before the message. */
export const TYPING_MS = 1_500;

export type LineTurn = { ok: true; typingAt: number } | { ok: false; retryAt: number };

/** Takes the session's next turn: when to start typing, or when the queue has room again. */
export async function takeLineTurn(env: Env, sessionRowId: string, now = Date.now()): Promise<LineTurn> {
  const db = database(env.DB);
  const slot = await db
    .select({ nextAt: lineSendSlots.nextAt })
    .from(lineSendSlots)
    .where(eq(lineSendSlots.sessionId, sessionRowId))
    .get();
  if (slot && slot.nextAt - now > MAX_WAIT_MS) return { ok: false, retryAt: slot.nextAt };
  const gap = pickGap(broadcastGap(env));
  const reserved = await db
    .insert(lineSendSlots)
    .values({ sessionId: sessionRowId, nextAt: now + TYPING_MS + gap })
    .onConflictDoUpdate({
      target: lineSendSlots.sessionId,
      set: { nextAt: sql`max(${lineSendSlots.nextAt}, ${now}) + ${TYPING_MS + gap}` },
    })
    .returning({ nextAt: lineSendSlots.nextAt })
    .get();
  return { ok: true, typingAt: (reserved?.nextAt ?? now) - TYPING_MS - gap };
}

/** What the caller says when the queue is full: nothing was sent. */
export const lineBusy = (retryAt: number): string =>
  "The line is busy: agents' sends on this session are paced (a gap between consecutive sends), " +
  `and the queue is full. Nothing was sent; retry after ${new Date(retryAt).toISOString()}.`;
