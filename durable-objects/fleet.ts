import { DurableObject } from "cloudflare:workers";
import type { Env } from "../workers/env";

/**
 * The Durable Object for the bridge fleet: registers bridges and assigns sessions to the least-loaded live one.
 * Declared in wrangler.toml from the start so its SQLite storage class never has to be migrated;
 * its behaviour lands with the issue that owns it (see docs/decisions.md).
 */
export class BridgeFleet extends DurableObject<Env> {}
