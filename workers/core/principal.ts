import type { Role } from "../db/schema";

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
  | { via: "api_key"; user: PublicUser; apiKeyId: string }
  | { via: "cookie"; user: PublicUser; webSession: { id: string; token: string; expiresAt: number } };
