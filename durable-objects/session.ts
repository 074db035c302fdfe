import { DurableObject } from "cloudflare:workers";
import type { Env } from "../workers/env";

/**
 * The Durable Object for one messaging session: lifecycle, QR, bridge lease, Baileys auth state and per-session data.
 * Declared in wrangler.toml from the start so its SQLite storage class never has to be migrated;
 * its behaviour lands with the issue that owns it (see docs/decisions.md).
 */
export class SessionDO extends DurableObject<Env> {}
