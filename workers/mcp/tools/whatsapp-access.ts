import type { ToolContext } from "./registry";
import { callRest, type RestAnswer, type RestCall } from "./rest";

/**
 * Every WhatsApp tool reaches the gateway's REST routes through here, so who may use which session is
 * decided in one place. A user key reaches the sessions it owns or is shared (the REST routes check).
 * An agent key reaches no session yet: agents will use their company's line under the board's policy
 * (issue 27's governance); until then they get a clear refusal, never another tenant's session.
 */
export async function whatsappCall(ctx: ToolContext, call: RestCall): Promise<RestAnswer> {
  if (ctx.caller.actor.type === "agent") {
    return {
      status: 403,
      body: { error: "Agents reach WhatsApp only through their company's line, and this company has none" },
    };
  }
  return callRest(ctx.appFetch, ctx.origin, ctx.caller, call);
}
