import { eq, sql } from "drizzle-orm";
import { broadcastGap, pickGap } from "../../../durable-objects/messaging/broadcasts/gap";
import { database } from "../../db/client";
import { lineSendSlots, type SessionRow } from "../../db/schema";
import type { ToolContext } from "./registry";
import type { RestAnswer } from "./rest";
import { lineCall } from "./whatsapp-access";

/**
 * Pacing of agents' sends per session (docs/mcp.md "Governance"), so no agent can flood a number:
 * consecutive agent sends on one session are spaced like broadcast sends (BROADCAST_GAP_MS, by
 * default a random 10–20 s; production never goes below that), and each shows "typing…" to the
 * recipient first. The next free moment per session is one D1 row, moved by one upsert, so
 * concurrent sends queue behind each other. A send whose turn is further away than MAX_WAIT_MS is
 * refused instead of held (the caller retries later).
 */
export const MAX_WAIT_MS = 60_000;
/** How long "typing…" shows before the message. */
export const TYPING_MS = 1_500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function paceLineSend(
  ctx: Pick<ToolContext, "appFetch" | "origin" | "env">,
  companyId: string,
  session: SessionRow,
  recipient: string,
): Promise<{ ok: true } | { ok: false; answer: RestAnswer }> {
  const db = database(ctx.env.DB);
  const now = Date.now();
  const slot = await db
    .select({ nextAt: lineSendSlots.nextAt })
    .from(lineSendSlots)
    .where(eq(lineSendSlots.sessionId, session.id))
    .get();
  if (slot && slot.nextAt - now > MAX_WAIT_MS) {
    const retryAt = new Date(slot.nextAt).toISOString();
    return {
      ok: false,
      answer: {
        status: 429,
        body: {
          error:
            "The line is busy: agents' sends on this session are paced (a gap between consecutive sends), " +
            `and the queue is full. Nothing was sent; retry after ${retryAt}.`,
        },
      },
    };
  }
  const gap = pickGap(broadcastGap(ctx.env));
  const reserved = await db
    .insert(lineSendSlots)
    .values({ sessionId: session.id, nextAt: now + TYPING_MS + gap })
    .onConflictDoUpdate({
      target: lineSendSlots.sessionId,
      set: { nextAt: sql`max(${lineSendSlots.nextAt}, ${now}) + ${TYPING_MS + gap}` },
    })
    .returning({ nextAt: lineSendSlots.nextAt })
    .get();
  const turn = (reserved?.nextAt ?? now) - TYPING_MS - gap;
  if (turn > now) await sleep(turn - now);
  await lineCall(ctx, companyId, {
    method: "POST",
    path: `/chat/${encodeURIComponent(session.sessionId)}/${encodeURIComponent(recipient)}/presence`,
    body: { presence: "composing" },
  });
  await sleep(TYPING_MS);
  return { ok: true };
}
