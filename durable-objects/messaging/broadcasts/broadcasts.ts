import { CREATOR_WITHOUT_ACCESS, mayStillOperate } from "../access";
import {
  type FailureStatus,
  failure,
  type Outcome,
  type SessionContext,
  success,
  type TimedWork,
} from "../context";
import { sendMessage } from "../messages/send";
import { broadcastGap, clampDelay, pickGap } from "./gap";
import { deterministicMessageId } from "./ids";
import {
  activeBroadcast,
  BROADCAST_ADDED_COLUMNS,
  BROADCAST_TABLES,
  type BroadcastRow,
  type BroadcastStatus,
  cancelBroadcast,
  failPending,
  findBroadcast,
  insertBroadcast,
  listBroadcasts,
  nextPending,
  patchBroadcast,
  patchRecipient,
  pendingCount,
  pruneHistory,
  type RecipientRow,
  type RecipientStatus,
  recipientsOf,
  recount,
} from "./store";

/**
 * Broadcast: one text to many recipients, sent by a durable job on the session's alarm. Each alarm
 * sends at most one recipient, then waits a random gap (10–20 s unless BROADCAST_GAP_MS says
 * otherwise), so the job survives restarts, bridge failover and deploys: it is just rows.
 * docs/broadcast-and-scheduler.md describes the states, retries and limits.
 */

export const BROADCASTS_SCHEMA: readonly string[] = BROADCAST_TABLES;
export { BROADCAST_ADDED_COLUMNS };

/** Attempts that reached the bridge without an answer (503) or failed inside it (500). */
export const RECIPIENT_ATTEMPTS = 10;
/** Wait before resending the same message after an unknown outcome. */
export const RETRY_MS = 5_000;
/** Polling while the session is down: waits grow with the outage, between these bounds. */
export const WAIT_MIN_MS = 5_000;
export const WAIT_MAX_MS = 60_000;
/** A job whose session stays down this long gives up: its remaining recipients fail with the reason. */
export const WAIT_GIVE_UP_MS = 24 * 60 * 60 * 1000;
/** A step holds its job this long at most (the bridge command times out after 15 s). */
export const LEASE_MS = 60_000;

/** Statuses that will not change by trying again: the send itself was refused. */
const FINAL_FAILURES: ReadonlySet<FailureStatus> = new Set([400, 403, 404, 409, 413]);

export interface BroadcastSummary {
  id: string;
  message: string;
  status: BroadcastStatus;
  total: number;
  sent: number;
  failed: number;
  pending: number;
  createdAt: string;
  finishedAt: string | null;
  /** When the next send is due, while running. */
  nextAt: string | null;
  /** The user on whose access it sends; null on older jobs. */
  createdBy: string | null;
  /** Why the service cancelled it (its creator lost operator access); null otherwise. */
  cancelReason: string | null;
}

export interface BroadcastRecipient {
  jid: string;
  status: RecipientStatus;
  messageId: string;
  error: string | null;
  attempts: number;
  sentAt: string | null;
}

export interface BroadcastDetail extends BroadcastSummary {
  recipients: BroadcastRecipient[];
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function summaryOf(sql: SqlStorage, row: BroadcastRow): BroadcastSummary {
  return {
    id: row.id,
    message: row.message,
    status: row.status,
    total: row.total,
    sent: row.sent,
    failed: row.failed,
    pending: row.status === "running" ? pendingCount(sql, row.id) : 0,
    createdAt: new Date(row.created_at).toISOString(),
    finishedAt: iso(row.finished_at),
    nextAt:
      row.status === "running" ? new Date(Math.max(row.next_at, row.lease_until ?? 0)).toISOString() : null,
    createdBy: row.created_by,
    cancelReason: row.cancel_reason,
  };
}

const recipientOf = (row: RecipientRow): BroadcastRecipient => ({
  jid: row.jid,
  status: row.status,
  messageId: row.message_id,
  error: row.error,
  attempts: row.attempts,
  sentAt: iso(row.sent_at),
});

const notFound = failure(404, "Broadcast not found");

export const broadcastsApi = {
  /**
   * Recipients arrive validated and de-duplicated by the Worker; it sends on `createdBy`'s access.
   * `delayMs` (the deprecated endpoint's `delay`) is waited on top of the random gap, never instead.
   */
  "broadcast.start": async (
    ctx: SessionContext,
    input: { recipients: string[]; message: string; createdBy: string; delayMs?: number },
  ): Promise<Outcome<{ broadcastId: string; total: number }>> => {
    if (!ctx.isConnected()) return failure(503, "Session not ready: WhatsApp is not connected");
    const id = crypto.randomUUID();
    const recipients = await Promise.all(
      input.recipients.map(async (jid, idx) => ({
        jid,
        messageId: await deterministicMessageId(`${id}:${idx}`),
      })),
    );
    const now = ctx.now();
    // A queued job starts when those before it finish; the first send of a lone job goes at once.
    insertBroadcast(ctx.sql, {
      id,
      message: input.message,
      recipients,
      createdBy: input.createdBy,
      delayMs: clampDelay(input.delayMs ?? 0),
      nextAt: now,
      now,
    });
    pruneHistory(ctx.sql);
    await ctx.wake(now);
    return success({ broadcastId: id, total: recipients.length });
  },

  "broadcast.list": (
    ctx: SessionContext,
    input: { limit: number; offset: number },
  ): Outcome<{ items: BroadcastSummary[]; total: number }> => {
    const { rows, total } = listBroadcasts(ctx.sql, input.limit, input.offset);
    return success({ items: rows.map((row) => summaryOf(ctx.sql, row)), total });
  },

  "broadcast.get": (ctx: SessionContext, input: { id: string }): Outcome<BroadcastDetail> => {
    const row = findBroadcast(ctx.sql, input.id);
    if (!row) return notFound;
    return success({
      ...summaryOf(ctx.sql, row),
      recipients: recipientsOf(ctx.sql, row.id).map(recipientOf),
    });
  },

  /** Idempotent for a cancelled job; a completed one has nothing left to stop (409). */
  "broadcast.cancel": (ctx: SessionContext, input: { id: string }): Outcome<BroadcastSummary> => {
    const row = findBroadcast(ctx.sql, input.id);
    if (!row) return notFound;
    if (row.status === "completed") return failure(409, "The broadcast has already completed");
    if (row.status === "running") cancelBroadcast(ctx.sql, row.id, ctx.now());
    const after = findBroadcast(ctx.sql, row.id);
    return after ? success(summaryOf(ctx.sql, after)) : notFound;
  },
};

/** When the active job may step next: its due time, or when a crashed step's lease runs out. */
function dueAt(job: BroadcastRow): number {
  return Math.max(job.next_at, job.lease_until ?? 0);
}

function waitDelay(waitedMs: number): number {
  return Math.min(WAIT_MAX_MS, Math.max(WAIT_MIN_MS, Math.floor(waitedMs / 4)));
}

/** Marks the job completed and gives the next queued one its turn after a gap. */
function complete(ctx: SessionContext, job: BroadcastRow, now: number): void {
  patchBroadcast(ctx.sql, job.id, {
    status: "completed",
    finished_at: now,
    lease_until: null,
    waiting_since: null,
  });
  const next = activeBroadcast(ctx.sql);
  if (next)
    patchBroadcast(ctx.sql, next.id, {
      next_at: Math.max(next.next_at, now + next.delay_ms + pickGap(broadcastGap(ctx.env))),
    });
}

type StepResult = {
  recipient: Pick<RecipientRow, "status" | "error" | "attempts" | "sent_at">;
  retry: boolean;
};

/** What one send did to its recipient, and whether the same message must be tried again. */
function judge(recipient: RecipientRow, outcome: Outcome<unknown>, now: number): StepResult {
  const attempts = recipient.attempts + 1;
  if (outcome.ok) return { recipient: { status: "sent", error: null, attempts, sent_at: now }, retry: false };
  if (FINAL_FAILURES.has(outcome.status)) {
    return { recipient: { status: "failed", error: outcome.error, attempts, sent_at: null }, retry: false };
  }
  if (attempts >= RECIPIENT_ATTEMPTS) {
    const error = `No confirmation after ${attempts} attempts (delivery unknown): ${outcome.error}`;
    return { recipient: { status: "failed", error, attempts, sent_at: null }, retry: false };
  }
  return { recipient: { status: "pending", error: outcome.error, attempts, sent_at: null }, retry: true };
}

async function attempt(
  ctx: SessionContext,
  job: BroadcastRow,
  recipient: RecipientRow,
): Promise<Outcome<unknown>> {
  try {
    return await sendMessage(ctx, {
      to: recipient.jid,
      content: { type: "text", text: job.message },
      messageId: recipient.message_id,
    });
  } catch (error) {
    // Treated like a bridge failure: retried with the same id, and bounded by RECIPIENT_ATTEMPTS.
    return failure(500, error instanceof Error ? error.message : String(error));
  }
}

/**
 * Every send re-checks the job's creator's access: one that ended by any path cancels the job, with
 * the reason. When D1 cannot say, the step is tried again later (nothing is sent meanwhile).
 */
async function creatorMayStillSend(ctx: SessionContext, job: BroadcastRow): Promise<boolean> {
  let allowed: boolean;
  try {
    allowed = await mayStillOperate(ctx, job.created_by);
  } catch (error) {
    console.error(
      JSON.stringify({ msg: "broadcast step deferred: access not checked", error: String(error) }),
    );
    patchBroadcast(ctx.sql, job.id, { lease_until: null, next_at: ctx.now() + RETRY_MS });
    return false;
  }
  // Other calls ran while D1 answered: the job may have been cancelled meanwhile.
  const running = findBroadcast(ctx.sql, job.id)?.status === "running";
  if (allowed && running) return true;
  if (running) cancelBroadcast(ctx.sql, job.id, ctx.now(), CREATOR_WITHOUT_ACCESS);
  patchBroadcast(ctx.sql, job.id, { lease_until: null });
  return false;
}

/**
 * One step of the active job: send its next pending recipient, record the outcome, and set when the
 * next step is due. Never consumes a recipient while the session is down.
 */
export async function broadcastStep(ctx: SessionContext): Promise<void> {
  const now = ctx.now();
  const job = activeBroadcast(ctx.sql);
  if (!job || dueAt(job) > now) return;
  const recipient = nextPending(ctx.sql, job.id);
  if (!recipient) return complete(ctx, job, now);
  if (!ctx.isConnected()) {
    const since = job.waiting_since ?? now;
    if (now - since >= WAIT_GIVE_UP_MS) {
      failPending(ctx.sql, job.id, `Session not connected for ${WAIT_GIVE_UP_MS / 3_600_000} hours`);
      return complete(ctx, job, now);
    }
    patchBroadcast(ctx.sql, job.id, { waiting_since: since, next_at: now + waitDelay(now - since) });
    return;
  }
  patchBroadcast(ctx.sql, job.id, { lease_until: now + LEASE_MS, waiting_since: null });
  if (!(await creatorMayStillSend(ctx, job))) return;
  const outcome = await attempt(ctx, job, recipient);
  const after = ctx.now();
  const { recipient: result, retry } = judge(recipient, outcome, after);
  const current = findBroadcast(ctx.sql, job.id);
  // Cancelled while sending: what went out is still recorded, but nothing is retried.
  const cancelled = current?.status !== "running";
  patchRecipient(ctx.sql, recipient, cancelled && retry ? { ...result, status: "cancelled" } : result);
  recount(ctx.sql, job.id);
  if (cancelled) {
    patchBroadcast(ctx.sql, job.id, { lease_until: null });
    return;
  }
  if (!retry && pendingCount(ctx.sql, job.id) === 0) return complete(ctx, job, after);
  const wait = retry ? RETRY_MS : job.delay_ms + pickGap(broadcastGap(ctx.env));
  patchBroadcast(ctx.sql, job.id, { lease_until: null, next_at: after + wait });
}

export const broadcastWork: TimedWork = {
  next: (ctx) => {
    const job = activeBroadcast(ctx.sql);
    return job ? dueAt(job) : null;
  },
  run: broadcastStep,
};
