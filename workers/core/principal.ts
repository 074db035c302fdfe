import type { Role } from "../db/schema";
import type { KeyGrant } from "./scopes";

/** The user as every response shows it: never the password hash, never a key or token. */
export interface PublicUser {
  id: string;
  name: string;
  email: string;
  image: string | null;
  role: Role;
}

/**
 * An agent's send on its company's WhatsApp line, made in-process as the owner who linked it
 * (mcp/tools/send-governance.ts). A message it schedules goes out under this agent's daily cap (not
 * refused by it when the board approved the schedule: `capEnforced` false) and the line's pacing.
 */
export interface LineAgentSend {
  agentId: string;
  companyId: string;
  capEnforced: boolean;
}

/** Who is calling, and with which credential. Built once per request by the auth middleware. */
export type Principal =
  | {
      via: "api_key";
      user: PublicUser;
      apiKeyId: string;
      /** A scoped key's scopes, limit and expiry (core/scopes.ts); null for the user's full key. */
      grant: KeyGrant | null;
      /** Only on a principal vouched for in-process (auth/in-process.ts): nothing outside can set it. */
      lineAgentSend?: LineAgentSend;
    }
  | { via: "cookie"; user: PublicUser; webSession: { id: string; token: string; expiresAt: number } };

/** What the principal's credential allows: a scoped key's grant, or null (a full key, a cookie). */
export const grantOfPrincipal = (principal: Principal): KeyGrant | null =>
  principal.via === "api_key" ? principal.grant : null;

/** The agent whose governed line send this in-process request is, if it is one. */
export const lineAgentSendOf = (principal: Principal): LineAgentSend | null =>
  principal.via === "api_key" ? (principal.lineAgentSend ?? null) : null;
