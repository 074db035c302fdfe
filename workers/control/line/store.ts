import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import {
  type CompanyLineRow,
  companyLines,
  companyMcpSettings,
  type McpToolPolicy,
  type SessionRow,
  sessions,
} from "../../db/schema";
import { DEFAULT_DAILY_SEND_CAP } from "../../mcp/governance/send-cap";

/**
 * The WhatsApp tools whose use by agents the board governs (MCP, docs/mcp.md "Governance"). Reads
 * are not governed: an agent may read its company's line (scope read).
 */
export const GOVERNED_TOOLS = [
  "send_text",
  "send_media",
  "send_location",
  "send_poll",
  "send_reaction",
  "schedule_message",
] as const;
export type GovernedTool = (typeof GOVERNED_TOOLS)[number];

/** A tool the board left alone: ask first when the recipient never wrote to the line, else allowed. */
export const DEFAULT_POLICY = "default";
export type PolicySetting = McpToolPolicy | typeof DEFAULT_POLICY;

/** Sends per agent per UTC day when the board set no cap (kept with the cap's counting). */
export { DEFAULT_DAILY_SEND_CAP };

/** The company's line and its session, or undefined when it has none. */
export async function findLine(
  db: Db,
  companyId: string,
): Promise<{ line: CompanyLineRow; session: SessionRow } | undefined> {
  const row = await db
    .select({ line: companyLines, session: sessions })
    .from(companyLines)
    .innerJoin(sessions, eq(sessions.id, companyLines.sessionId))
    .where(eq(companyLines.companyId, companyId))
    .get();
  return row ?? undefined;
}

export interface McpSettings {
  policies: Record<GovernedTool, PolicySetting>;
  dailySendCap: number;
  dailySendCapIsDefault: boolean;
}

/** The board's settings with every default filled in. */
export async function mcpSettingsOf(db: Db, companyId: string): Promise<McpSettings> {
  const row = await db
    .select()
    .from(companyMcpSettings)
    .where(eq(companyMcpSettings.companyId, companyId))
    .get();
  const set = row?.policies ?? {};
  const policies = Object.fromEntries(
    GOVERNED_TOOLS.map((tool) => [tool, set[tool] ?? DEFAULT_POLICY]),
  ) as Record<GovernedTool, PolicySetting>;
  const cap = row?.dailySendCap ?? null;
  return {
    policies,
    dailySendCap: cap ?? DEFAULT_DAILY_SEND_CAP,
    dailySendCapIsDefault: cap === null,
  };
}

/** Stores a change: named tools take the new setting (`default` forgets it); the cap when given. */
export async function saveMcpSettings(
  db: Db,
  companyId: string,
  userId: string,
  change: { policies?: Partial<Record<GovernedTool, PolicySetting>>; dailySendCap?: number | null },
): Promise<void> {
  const row = await db
    .select()
    .from(companyMcpSettings)
    .where(eq(companyMcpSettings.companyId, companyId))
    .get();
  const policies: Record<string, McpToolPolicy> = { ...(row?.policies ?? {}) };
  for (const [tool, setting] of Object.entries(change.policies ?? {})) {
    if (setting === DEFAULT_POLICY || setting === undefined) delete policies[tool];
    else policies[tool] = setting;
  }
  const dailySendCap = change.dailySendCap === undefined ? (row?.dailySendCap ?? null) : change.dailySendCap;
  const values = { policies, dailySendCap, updatedByUserId: userId, updatedAt: Date.now() };
  await db
    .insert(companyMcpSettings)
    .values({ companyId, ...values })
    .onConflictDoUpdate({ target: companyMcpSettings.companyId, set: values });
}
