import { DurableObject } from "cloudflare:workers";
import type { Env } from "../workers/env";

/**
 * The Durable Object for one control-plane issue: serialises checkout, transitions and document revisions.
 * Declared in wrangler.toml from the start so its SQLite storage class never has to be migrated;
 * its behaviour lands with the issue that owns it (see docs/decisions.md).
 */
export class IssueDO extends DurableObject<Env> {}
