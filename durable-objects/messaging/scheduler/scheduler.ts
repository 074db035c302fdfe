import type { Env } from "../../../workers/core/env";
import type { LineAgentSend } from "../../../workers/core/principal";
import { MAX_WAIT_MS, TYPING_MS } from "../../../workers/mcp/governance/send-turns";
import { CREATOR_WITHOUT_ACCESS, mayStillOperate } from "../access";
import { deterministicMessageId } from "../broadcasts/ids";
import { failure, type Outcome, type SessionContext, success, type TimedWork } from "../context";
import { sendMessage } from "../messages/send";
import { type AgentTurn, giveBack, logRefusedSend, sentForOf, takeAgentTurn } from "./agent-sends";
import { outgoingContent, resolveSchedule, type ScheduleFields, type ScheduleInput } from "./content";
import {
  deleteScheduled,
  dueRows,
  earliestDue,
  fieldsOf,
  findScheduled,
  insertRun,
  insertScheduled,
  listScheduled,
  patchScheduled,
  pruneScheduledHistory,
  rescheduleRow,
  SCHEDULER_ADDED_COLUMNS,
  SCHEDULER_TABLES,
  type ScheduledMessage,
  type ScheduledRow,
  toScheduledMessage,
} from "./store";
import { nextTick } from "./time";

/**
 * Scheduled messages: PENDING → SENT | FAILED, fired by the session's alarm. A send that finds the
 * session down is retried every SCHEDULER_RETRY_MS (default 60 s) and FAILED with a reason after
 * SCHEDULER_RETRY_LIMIT attempts (default 10); a refused send fails at once. Every attempt at one
 * occurrence uses the same message id, so a retry after an unknown outcome cannot send it twice.
 * docs/broadcast-and-scheduler.md has the full rules.
 */

export const SCHEDULER_SCHEMA: readonly string[] = SCHEDULER_TABLES;
export { SCHEDULER_ADDED_COLUMNS };

export const DEFAULT_RETRY_LIMIT = 10;
export const DEFAULT_RETRY_MS = 60_000;
/** Rows fired per alarm; the rest are due at once and fire on the next one. */
const BATCH = 25;
/** An attempt holds its row this long at most (the bridge command times out after 15 s). */
const LEASE_MS = 60_000;

function positiveInt(text: string | undefined, fallback: number): number {
  const value = Number(text);
  return text !== undefined && Number.isInteger(value) && value > 0 ? value : fallback;
}

export const retryLimit = (env: Env) => positiveInt(env.SCHEDULER_RETRY_LIMIT, DEFAULT_RETRY_LIMIT);
export const retryDelay = (env: Env) => positiveInt(env.SCHEDULER_RETRY_MS, DEFAULT_RETRY_MS);

const notFound = failure(404, "Scheduled message not found");

async function view(ctx: SessionContext, row: ScheduledRow | null): Promise<Outcome<ScheduledMessage>> {
  if (!row) return notFound;
  const { slug } = await ctx.config();
  return success(toScheduledMessage(row, slug));
}

/** Changes only while the message waits: once sent or failed it is history, and mid-send it is busy. */
function editable(ctx: SessionContext, row: ScheduledRow | null): Outcome<ScheduledRow> {
  if (!row) return notFound;
  if (row.status !== "PENDING") return failure(409, `The message is already ${row.status}`);
  if ((row.lease_until ?? 0) > ctx.now()) return failure(409, "The message is being sent right now");
  return success(row);
}

export const schedulerApi = {
  "scheduler.list": async (
    ctx: SessionContext,
    input: { tab: "pending" | "history" },
  ): Promise<Outcome<ScheduledMessage[]>> => {
    const { slug } = await ctx.config();
    return success(listScheduled(ctx.sql, input.tab).map((row) => toScheduledMessage(row, slug)));
  },

  "scheduler.get": (ctx: SessionContext, input: { id: string }): Promise<Outcome<ScheduledMessage>> =>
    view(ctx, findScheduled(ctx.sql, input.id)),

  /**
   * `createdBy`: the caller; the message is sent only while they may operate the session. `sentFor`:
   * the agent whose governed send it is (sent under its cap and the line's pacing: agent-sends.ts).
   */
  "scheduler.create": async (
    ctx: SessionContext,
    input: ScheduleInput & { jid: string; sendAt: string; createdBy: string; sentFor?: LineAgentSend | null },
  ): Promise<Outcome<ScheduledMessage>> => {
    const fields: ScheduleFields = {
      jid: input.jid,
      content: input.content ?? null,
      mediaUrl: input.mediaUrl ?? null,
      mediaType: input.mediaType ?? null,
      fileName: input.fileName ?? null,
      timezone: input.timezone ?? "UTC",
      cronExpression: input.cronExpression ?? null,
    };
    const now = ctx.now();
    const resolved = resolveSchedule(fields, input.sendAt, null, now);
    if (!resolved.ok) return failure(400, resolved.error);
    const id = crypto.randomUUID();
    const sentFor = input.sentFor ? JSON.stringify(input.sentFor) : null;
    insertScheduled(ctx.sql, id, resolved.schedule, { by: input.createdBy, sentFor }, now);
    await ctx.wake(resolved.schedule.sendAt);
    return view(ctx, findScheduled(ctx.sql, id));
  },

  /** Fields left out keep their value; null clears an optional one. `by` (the caller) now owns the send. */
  "scheduler.update": async (
    ctx: SessionContext,
    input: { id: string; patch: ScheduleInput; by: string },
  ): Promise<Outcome<ScheduledMessage>> => {
    const row = editable(ctx, findScheduled(ctx.sql, input.id));
    if (!row.ok) return row;
    const { sendAt, ...changes } = input.patch;
    const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
    const fields: ScheduleFields = { ...fieldsOf(row.data), ...defined };
    // Dropping the media turns it into a text: its type and file name go with it unless restated.
    if (changes.mediaUrl === null) {
      fields.mediaType = changes.mediaType ?? null;
      fields.fileName = changes.fileName ?? null;
    }
    const now = ctx.now();
    const resolved = resolveSchedule(fields, sendAt, row.data.send_at, now);
    if (!resolved.ok) return failure(400, resolved.error);
    rescheduleRow(ctx.sql, row.data.id, resolved.schedule, input.by, now);
    await ctx.wake(resolved.schedule.sendAt);
    return view(ctx, findScheduled(ctx.sql, row.data.id));
  },

  "scheduler.delete": (ctx: SessionContext, input: { id: string }): Outcome => {
    const row = findScheduled(ctx.sql, input.id);
    if (!row) return notFound;
    if ((row.lease_until ?? 0) > ctx.now()) return failure(409, "The message is being sent right now");
    deleteScheduled(ctx.sql, row.id);
    return success(null);
  },
};

interface Finished {
  status: "SENT" | "FAILED";
  attempts: number;
  error: string | null;
  sentAt: number | null;
}

/**
 * Ends one occurrence. A one-off row becomes SENT or FAILED; a recurring row records the run as its
 * own history row and moves to its next tick after both the occurrence and now (missed ticks are
 * skipped, never sent as a backlog).
 */
function finish(ctx: SessionContext, row: ScheduledRow, result: Finished, now: number): void {
  const tick = row.cron ? nextTick(row.cron, row.timezone, Math.max(row.send_at, now)) : null;
  if (tick !== null) {
    insertRun(ctx.sql, row, { id: crypto.randomUUID(), ...result }, now);
    patchScheduled(
      ctx.sql,
      row.id,
      {
        send_at: tick,
        next_at: tick,
        attempts: 0,
        last_error: result.error,
        sent_at: result.sentAt ?? row.sent_at,
        message_id: null,
        lease_until: null,
      },
      now,
    );
  } else {
    patchScheduled(
      ctx.sql,
      row.id,
      {
        status: result.status,
        attempts: result.attempts,
        last_error: result.error,
        sent_at: result.sentAt,
        lease_until: null,
      },
      now,
    );
  }
  pruneScheduledHistory(ctx.sql);
}

async function attempt(ctx: SessionContext, row: ScheduledRow, messageId: string): Promise<Outcome<unknown>> {
  try {
    return await sendMessage(ctx, { to: row.jid, content: outgoingContent(fieldsOf(row)), messageId });
  } catch (error) {
    return failure(500, error instanceof Error ? error.message : String(error));
  }
}

/** A row whose creator lost access is cancelled, recurring or not: none of its ticks is sent. */
function cancelForCreator(ctx: SessionContext, row: ScheduledRow): void {
  patchScheduled(
    ctx.sql,
    row.id,
    { status: "CANCELLED", last_error: CREATOR_WITHOUT_ACCESS, lease_until: null },
    ctx.now(),
  );
}

/**
 * One attempt at a due row: sent, refused (FAILED), or retried later with the same message id. First
 * its creator's access is read again, so a share that ended by any path stops the send here.
 */
export async function fire(ctx: SessionContext, due: ScheduledRow): Promise<void> {
  let allowed: boolean;
  try {
    allowed = await mayStillOperate(ctx, due.created_by);
  } catch (error) {
    // D1 unreachable: not a reason to send, nor to cancel; the row is tried again later.
    const reason = `could not check who may send it: ${error instanceof Error ? error.message : String(error)}`;
    patchScheduled(
      ctx.sql,
      due.id,
      { last_error: reason, next_at: ctx.now() + retryDelay(ctx.env) },
      ctx.now(),
    );
    return;
  }
  // Other calls ran while D1 answered: the row may have been deleted, cancelled or changed.
  if (findScheduled(ctx.sql, due.id)?.updated_at !== due.updated_at) return;
  if (!allowed) return cancelForCreator(ctx, due);
  const messageId = due.message_id ?? (await deterministicMessageId(`${due.id}:${due.send_at}`));
  const agent = sentForOf(due);
  // An agent's message may first wait for the line's turn: the lease covers that wait too.
  const lease = LEASE_MS + (agent ? MAX_WAIT_MS + TYPING_MS : 0);
  patchScheduled(ctx.sql, due.id, { lease_until: ctx.now() + lease, message_id: messageId }, ctx.now());
  const row = { ...due, message_id: messageId };
  const day = agent ? await governAgentSend(ctx, row, agent) : null;
  if (agent && day === null) return;
  const outcome = await attempt(ctx, row, messageId);
  if (!outcome.ok && agent && day !== null) await giveBack(ctx, agent, day);
  const now = ctx.now();
  const attempts = row.attempts + 1;
  // Deleting is refused while the lease is held, but a row gone anyway has nothing left to record.
  if (findScheduled(ctx.sql, row.id)?.status !== "PENDING") return;
  if (outcome.ok) return finish(ctx, row, { status: "SENT", attempts, error: null, sentAt: now }, now);
  if (outcome.status !== 503 && outcome.status !== 500) {
    return finish(ctx, row, { status: "FAILED", attempts, error: outcome.error, sentAt: null }, now);
  }
  const limit = retryLimit(ctx.env);
  if (attempts >= limit) {
    const reason =
      outcome.status === 503
        ? `session not connected after ${attempts} attempts: ${outcome.error}`
        : `failed after ${attempts} attempts: ${outcome.error}`;
    return finish(ctx, row, { status: "FAILED", attempts, error: reason, sentAt: null }, now);
  }
  patchScheduled(
    ctx.sql,
    row.id,
    { attempts, last_error: outcome.error, next_at: now + retryDelay(ctx.env), lease_until: null },
    now,
  );
}

/**
 * The cap and the line's turn for an agent's message (agent-sends.ts): the day its send was counted
 * on, or null when it is not sent now (the row then says why: FAILED by the cap, or put off).
 */
async function governAgentSend(ctx: SessionContext, row: ScheduledRow, agent: LineAgentSend) {
  let turn: AgentTurn;
  try {
    turn = await takeAgentTurn(ctx, row, agent);
  } catch (error) {
    const reason = `could not count it against the agent's cap: ${error instanceof Error ? error.message : String(error)}`;
    turn = { kind: "later", at: ctx.now() + retryDelay(ctx.env), error: reason };
  }
  if (turn.kind === "go") return turn.day;
  const now = ctx.now();
  if (turn.kind === "later") {
    patchScheduled(ctx.sql, row.id, { last_error: turn.error, next_at: turn.at, lease_until: null }, now);
    return null;
  }
  if (findScheduled(ctx.sql, row.id)?.status === "PENDING")
    finish(ctx, row, { status: "FAILED", attempts: row.attempts, error: turn.error, sentAt: null }, now);
  await logRefusedSend(ctx, row, agent, turn.error);
  return null;
}

export const scheduledWork: TimedWork = {
  next: (ctx) => earliestDue(ctx.sql),
  run: async (ctx) => {
    for (const row of dueRows(ctx.sql, ctx.now(), BATCH)) await fire(ctx, row);
  },
};
