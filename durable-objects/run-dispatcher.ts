import { DurableObject } from "cloudflare:workers";
import type { Env } from "../workers/env";

/** Hands queued heartbeat runs to connected bridge runners (filled in by the runner work of issue 7). */
export class RunDispatcher extends DurableObject<Env> {
  async nudge(): Promise<void> {}
}
