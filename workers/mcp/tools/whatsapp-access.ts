import { vouchFor } from "../../auth/in-process";
import { lineOwnerAccess } from "../../control/line";
import type { Env } from "../../core/env";
import type { LineAgentSend, Principal } from "../../core/principal";
import type { SessionRow } from "../../db/schema";
import type { BoundFetch, ToolContext } from "./registry";
import { callRest, type RestAnswer, type RestCall } from "./rest";

/**
 * Every WhatsApp tool reaches the gateway's REST routes through here, so who may use which session is
 * decided in one place. A user key reaches the sessions it owns or is shared (the REST routes check).
 * An agent key reaches only its company's line (a session an owner linked: control/line), as that
 * owner, and through this door only to read: its sends pass the board's governance first
 * (send-governance.ts), which then calls `lineCall`.
 */
export async function whatsappCall(ctx: ToolContext, call: RestCall): Promise<RestAnswer> {
  const { actor } = ctx.caller;
  if (actor.type !== "agent") return callRest(ctx.appFetch, ctx.origin, ctx.caller, call);
  if (call.method !== "GET")
    return refusal(403, "Agents send only through the send tools, under the board's policy");
  return lineCall(ctx, actor.companyId, call);
}

/** What the REST API would answer, for a refusal made here. */
const refusal = (status: number, error: string): RestAnswer => ({ status, body: { error } });

const NOT_THE_LINE: RestAnswer = refusal(404, "Session not found");

/** The line's session named by the path's second segment (`/messages/{sessionId}/…`), if it is. */
export function namesLineSession(path: string, session: SessionRow): boolean {
  const segment = path.split("?")[0]?.split("/")[2];
  if (segment === undefined) return false;
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    return false;
  }
  return id === session.sessionId || id === session.id;
}

/** Who an agent acts as on its company's line: the owner who linked it, while they still own it. */
export type LineAccess =
  | { ok: true; session: SessionRow; principal: Principal }
  | { ok: false; answer: RestAnswer };

export async function lineAccess(env: Env, companyId: string): Promise<LineAccess> {
  const access = await lineOwnerAccess(env, companyId);
  return access.ok ? access : { ok: false, answer: refusal(access.status, access.error) };
}

/**
 * One REST call on the company's line, in-process as the owner who linked it: the request carries no
 * credential, only the principal vouched for here (auth/in-process.ts), which nothing from outside can
 * forge. The gateway then applies that owner's own access to the session. Another session id is 404.
 * `agentSend` names the agent whose governed send this is, for what happens later (a schedule).
 */
export async function lineCall(
  ctx: Pick<ToolContext, "appFetch" | "origin" | "env">,
  companyId: string,
  call: RestCall,
  agentSend?: LineAgentSend,
): Promise<RestAnswer> {
  const access = await lineAccess(ctx.env, companyId);
  if (!access.ok) return access.answer;
  if (call.path === "/sessions" && call.method === "GET") return lineSessionList(ctx, access, call);
  if (!namesLineSession(call.path, access.session)) return NOT_THE_LINE;
  const principal: Principal =
    agentSend && access.principal.via === "api_key"
      ? { ...access.principal, lineAgentSend: agentSend }
      : access.principal;
  return callRest(asLineOwner(ctx.appFetch, principal), ctx.origin, { headers: {} }, call);
}

/** Requests made as the line's owner. */
const asLineOwner =
  (appFetch: BoundFetch, principal: Principal): BoundFetch =>
  (request) =>
    appFetch(vouchFor(request, principal));

/** The owner's session list, cut down to the line: an agent sees no other session of theirs. */
async function lineSessionList(
  ctx: Pick<ToolContext, "appFetch" | "origin">,
  access: Extract<LineAccess, { ok: true }>,
  call: RestCall,
): Promise<RestAnswer> {
  const answer = await callRest(
    asLineOwner(ctx.appFetch, access.principal),
    ctx.origin,
    { headers: {} },
    call,
  );
  const body = answer.body as { data?: unknown } | null;
  if (answer.status !== 200 || !body || !Array.isArray(body.data)) return answer;
  const data = body.data.filter(
    (item: { id?: unknown; sessionId?: unknown }) =>
      item.id === access.session.id || item.sessionId === access.session.sessionId,
  );
  return { status: 200, body: { ...body, data } };
}
