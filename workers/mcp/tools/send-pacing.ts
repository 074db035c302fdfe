import type { SessionRow } from "../../db/schema";
import { lineBusy, TYPING_MS, takeLineTurn } from "../governance/send-turns";
import type { ToolContext } from "./registry";
import type { RestAnswer } from "./rest";
import { lineCall } from "./whatsapp-access";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Pacing of an agent's send from a tool call (control/line/send-turns.ts): the call waits for the
 * session's turn, shows "typing…" to the recipient, then returns so the send can go. A turn too far
 * away is refused with a retry time instead.
 */
export async function paceLineSend(
  ctx: Pick<ToolContext, "appFetch" | "origin" | "env">,
  companyId: string,
  session: SessionRow,
  recipient: string,
): Promise<{ ok: true } | { ok: false; answer: RestAnswer }> {
  const turn = await takeLineTurn(ctx.env, session.id);
  if (!turn.ok) return { ok: false, answer: { status: 429, body: { error: lineBusy(turn.retryAt) } } };
  const wait = turn.typingAt - Date.now();
  if (wait > 0) await sleep(wait);
  await lineCall(ctx, companyId, {
    method: "POST",
    path: `/chat/${encodeURIComponent(session.sessionId)}/${encodeURIComponent(recipient)}/presence`,
    body: { presence: "composing" },
  });
  await sleep(TYPING_MS);
  return { ok: true };
}
