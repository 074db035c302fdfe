import type { Env } from "../../core/env";
import type { SessionRow } from "../../db/schema";

/**
 * Pacing of agents' sends per session (docs/mcp.md "Governance"). Filled in by the pacing step;
 * until then a send goes out at once.
 */
export async function paceLineSend(_env: Env, _session: SessionRow, _recipient: string): Promise<void> {}
