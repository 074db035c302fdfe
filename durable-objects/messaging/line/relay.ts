import type { Json } from "../../../bridge/src/protocol/seam";
import type { Env } from "../../../workers/core/env";
import { otherAddress } from "../contacts/store";
import type { SessionContext, TimedWork } from "../context";

/**
 * The company line's inbound relay (issue 28, docs/decisions.md "Answers on the company line"): the
 * outbox entries an answer can be (`message.received`, `poll.vote`) handed in-process, in order, to the
 * control plane's handler (workers/control/line/answers), which applies those of a line session and
 * ignores the rest. Its cursor moves only after the handler returned, so an entry whose handling
 * failed or was cut short (a crash, an evicted object) is handed again on the next alarm; the handler
 * records each WhatsApp id once (`line_answers`), so handing it again never applies it twice.
 */

export const RELAYED_EVENTS: readonly string[] = ["message.received", "poll.vote"];

export interface RelayedEvent {
  seq: number;
  event: string;
  data: Json;
}

/** Applies one event of the session (internal id); throws when it should be handed again later. */
export type LineInboundHandler = (env: Env, sessionId: string, entry: RelayedEvent) => Promise<void>;

let handler: LineInboundHandler | undefined;

/** The app registers its handler when it is built (workers/app.ts), as it registers its own fetch. */
export function registerLineInbound(registered: LineInboundHandler): void {
  handler = registered;
}

/** The registered handler itself: how tests deliver an event (a `poll.vote`) the bridge cannot yet report. */
export function lineInboundHandler(): LineInboundHandler | undefined {
  return handler;
}

/** After MESSAGING_SCHEMA (the outbox). The cursor starts at the outbox's end the first time: events from before the relay existed were never owed to it. */
export const LINE_RELAY_SCHEMA: readonly string[] = [
  "CREATE TABLE IF NOT EXISTS line_relay (k TEXT PRIMARY KEY, v INTEGER NOT NULL)",
  "INSERT OR IGNORE INTO line_relay (k, v) SELECT 'cursor', COALESCE(MAX(seq), 0) FROM outbox",
];

/** Waits after a failed hand-over, doubling from the first to the last. */
const RETRY_MS = [1_000, 5_000, 30_000, 120_000, 600_000];
const BATCH = 50;

type RelayKey = "cursor" | "failures" | "retry_at";

const getValue = (sql: SqlStorage, k: RelayKey): number | null =>
  sql.exec<{ v: number }>("SELECT v FROM line_relay WHERE k = ?", k).toArray()[0]?.v ?? null;
const setValue = (sql: SqlStorage, k: RelayKey, v: number): void => {
  sql.exec("INSERT OR REPLACE INTO line_relay (k, v) VALUES (?, ?)", k, v);
};

const cursorOf = (sql: SqlStorage): number => getValue(sql, "cursor") ?? 0;

const placeholders = RELAYED_EVENTS.map(() => "?").join(", ");

function pending(sql: SqlStorage, after: number): RelayedEvent[] {
  return sql
    .exec<{ seq: number; event: string; data: string }>(
      `SELECT seq, event, data FROM outbox WHERE seq > ? AND event IN (${placeholders}) ORDER BY seq LIMIT ?`,
      after,
      ...RELAYED_EVENTS,
      BATCH,
    )
    .toArray()
    .map((row) => ({ seq: row.seq, event: row.event, data: JSON.parse(row.data) as Json }));
}

const hasPending = (sql: SqlStorage): boolean => pending(sql, cursorOf(sql)).length > 0;

/** `123@lid` of `123:4@lid` / `123@lid`; null for anything but a LID. */
const bareLid = (jid: unknown): string | null => {
  const match = typeof jid === "string" ? /^(\d+)(?::\d+)?@lid$/.exec(jid) : null;
  return match ? `${match[1]}@lid` : null;
};

/**
 * A member's answer must be matched to their verified number. A sender WhatsApp names only by LID
 * (no number beside it in the message) is resolved here from the pairs this session has learned
 * (contacts), as `senderPhone` / `voterPhone`; the outbox entry itself stays as the webhook sent it.
 */
export function withSenderPhone(sql: SqlStorage, entry: RelayedEvent): RelayedEvent {
  const data = entry.data as Record<string, unknown>;
  const field = entry.event === "poll.vote" ? "voter" : "sender";
  const target = entry.event === "poll.vote" ? "voterPhone" : "senderPhone";
  if (typeof data !== "object" || data === null || (typeof data[target] === "string" && data[target] !== ""))
    return entry;
  const lid = bareLid(data[field]);
  const phoneJid = lid === null ? null : otherAddress(sql, lid);
  const digits = phoneJid?.match(/^(\d{5,20})@s\.whatsapp\.net$/)?.[1];
  return digits ? { ...entry, data: { ...data, [target]: digits } as Json } : entry;
}

/** Hands every pending entry over in order; the first failure stops the run and waits its retry. */
async function relay(ctx: SessionContext): Promise<void> {
  if (!handler) return;
  for (;;) {
    const batch = pending(ctx.sql, cursorOf(ctx.sql));
    if (batch.length === 0) return;
    for (const entry of batch) {
      try {
        await handler(ctx.env, ctx.sessionId, withSenderPhone(ctx.sql, entry));
      } catch (error) {
        const failures = (getValue(ctx.sql, "failures") ?? 0) + 1;
        setValue(ctx.sql, "failures", failures);
        setValue(ctx.sql, "retry_at", ctx.now() + (RETRY_MS[failures - 1] ?? RETRY_MS.at(-1) ?? 0));
        console.error(
          JSON.stringify({ msg: "line answer not applied", seq: entry.seq, error: String(error) }),
        );
        return;
      }
      setValue(ctx.sql, "cursor", entry.seq);
      setValue(ctx.sql, "failures", 0);
      setValue(ctx.sql, "retry_at", 0);
    }
  }
}

export const lineRelayWork: TimedWork = {
  next: (ctx) => {
    if (!handler || !hasPending(ctx.sql)) return null;
    return Math.max(ctx.now(), getValue(ctx.sql, "retry_at") ?? 0);
  },
  run: relay,
};
