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

/** Who is calling, and with which credential. Built once per request by the auth middleware. */
export type Principal =
  | {
      via: "api_key";
      user: PublicUser;
      apiKeyId: string;
      /** A scoped key's scopes, limit and expiry (core/scopes.ts); null for the user's full key. */
      grant: KeyGrant | null;
    }
  | { via: "cookie"; user: PublicUser; webSession: { id: string; token: string; expiresAt: number } };

/** What the principal's credential allows: a scoped key's grant, or null (a full key, a cookie). */
export const grantOfPrincipal = (principal: Principal): KeyGrant | null =>
  principal.via === "api_key" ? principal.grant : null;
