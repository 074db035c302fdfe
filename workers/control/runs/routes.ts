import { createRoute, z } from "@hono/zod-openapi";
import { and, asc, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import { TranscriptEventSchema } from "../../../bridge/src/protocol/transcript";
import type { Db } from "../../db/client";
import { heartbeatRunLogChunks, heartbeatRuns, RUN_STATUSES } from "../../db/schema";
import { badRequest, conflict, forbidden, notFound } from "../../http/errors";
import { controlAuth, controlErrors, createRouter, json } from "../../http/openapi";
import { RunSchema } from "../agents";
import { companyScrubber, type Scrubber, scrubChunks } from "../secrets";
import {
  cappedTotal,
  companyForActor,
  controlContext,
  ensureVisible,
  issueIdIn,
  pageHeaders,
  pageOf,
  setPageHeaders,
} from "../shared";
import { settleHttpRun } from "./http-adapter";
import { EXCERPT_CHARS } from "./lifecycle";
import { runResources } from "./resources";
import { runEvents } from "./transcript";

/**
 * Heartbeat runs: what woke an agent, what its process did, how it ended. Output is scrubbed of the
 * company's secrets as it arrives; everything read here (log, excerpt, transcript, error) is
 * scrubbed again with the company's current secrets, so output stored before a secret existed, or
 * before scrubbing did, is never served raw.
 */
export const runRoutes = createRouter();
const tags = ["Heartbeat runs"];

const RunParamSchema = z.object({ runId: z.uuid() });
const RunListQuerySchema = z.object({
  agentId: z.uuid().optional(),
  issueId: z.string().min(1).max(100).optional().openapi({
    description: "Only the runs woken for this issue (its id or identifier, e.g. ACM-12)",
  }),
  status: z
    .string()
    .optional()
    .openapi({ description: `Comma list of ${RUN_STATUSES.join(", ")}` }),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.string().min(1).max(64).optional().openapi({
    description: "A run's id: only runs older than it (the X-Next-Cursor of the previous page)",
  }),
});
const RunDetailSchema = RunSchema.extend({
  logExcerpt: z.string().nullable().openapi({ description: "The last 16 KiB of output" }),
});
const RunLogSchema = z.object({
  runId: z.string(),
  chunks: z.array(
    z.object({ seq: z.number().int(), stream: z.string(), text: z.string(), createdAt: z.string() }),
  ),
});

const RunEventSchema = z
  .object({
    seq: z.number().int().openapi({ description: "Order within the run, from 0" }),
    createdAt: z.string(),
  })
  .and(TranscriptEventSchema)
  .openapi("HeartbeatRunEvent", {
    description:
      "One transcript event: init (session, model), assistant and thinking text, tool_call (name, " +
      "input as JSON text), tool_result (output, isError), result (the CLI's summary: ok, cost, " +
      "tokens, turns), error, or system (what the runner did, e.g. a rejected session started afresh)",
  });
const RunEventsSchema = z.object({ runId: z.string(), events: z.array(RunEventSchema) });

/** A run's error as shown: a runner's error often quotes the process's output. */
const scrubbedError = <T extends { errorReason: string | null }>(scrubber: Scrubber, run: T): T => ({
  ...run,
  errorReason: run.errorReason === null ? null : scrubber.scrub(run.errorReason),
});

/** The stored excerpt is the log's tail: when it was cut, it may begin with the rest of a secret. */
function scrubbedExcerpt(scrubber: Scrubber, excerpt: string | null): string | null {
  if (excerpt === null) return null;
  return excerpt.length >= EXCERPT_CHARS ? scrubber.scrubCutStart(excerpt) : scrubber.scrub(excerpt);
}

/** Runs older than `runId` in the list's order (newest first, the id breaking ties); another company's id is a 400. */
async function olderThanRun(db: Db, companyId: string, runId: string): Promise<SQL> {
  const cursor = await db
    .select({ createdAt: heartbeatRuns.createdAt, id: heartbeatRuns.id })
    .from(heartbeatRuns)
    .where(and(eq(heartbeatRuns.companyId, companyId), eq(heartbeatRuns.id, runId)))
    .get();
  if (!cursor) throw badRequest("before: no such run in this company");
  return sql`(${heartbeatRuns.createdAt}, ${heartbeatRuns.id}) < (${cursor.createdAt}, ${cursor.id})`;
}

function statusFilter(raw: string | undefined) {
  if (!raw) return undefined;
  const wanted = raw.split(",").map((status) => status.trim());
  return wanted.filter((status): status is (typeof RUN_STATUSES)[number] =>
    (RUN_STATUSES as readonly string[]).includes(status),
  );
}

runRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/heartbeat-runs",
    tags,
    summary: "Runs of the company, newest first (50 by default)",
    description:
      "Paging: X-Next-Cursor (while more follow) is the `before` of the next page; X-Total-Count says how " +
      "many runs match the filters.",
    security: controlAuth,
    request: { params: z.object({ companyId: z.string() }), query: RunListQuerySchema },
    responses: {
      200: { ...json(z.array(RunSchema), "Runs"), headers: pageHeaders("runs", "before") },
      ...controlErrors,
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const query = c.req.valid("query");
    const issueId = await issueIdIn(db, company.id, query.issueId);
    const statuses = statusFilter(query.status);
    const filters = and(
      eq(heartbeatRuns.companyId, company.id),
      query.agentId ? eq(heartbeatRuns.agentId, query.agentId) : undefined,
      issueId ? eq(heartbeatRuns.issueId, issueId) : undefined,
      statuses ? inArray(heartbeatRuns.status, statuses) : undefined,
    );
    const after = query.before === undefined ? undefined : await olderThanRun(db, company.id, query.before);
    const [read, total] = await Promise.all([
      db
        .select()
        .from(heartbeatRuns)
        .where(and(filters, after))
        .orderBy(desc(heartbeatRuns.createdAt), desc(heartbeatRuns.id))
        .limit(query.limit + 1),
      cappedTotal(db, heartbeatRuns, filters),
    ]);
    const { rows, nextCursor } = pageOf(read, query.limit, (last) => last.id);
    setPageHeaders(c, total, nextCursor);
    const scrubber = await companyScrubber(c.env, db, company.id);
    return c.json(
      (await runResources(db, rows)).map((run) => scrubbedError(scrubber, run)),
      200,
    );
  },
);

runRoutes.openapi(
  createRoute({
    method: "get",
    path: "/heartbeat-runs/{runId}",
    tags,
    summary: "One run, with the tail of its output",
    security: controlAuth,
    request: { params: RunParamSchema },
    responses: { 200: json(RunDetailSchema, "The run"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const row = await db
      .select()
      .from(heartbeatRuns)
      .where(eq(heartbeatRuns.id, c.req.valid("param").runId))
      .get();
    const run = await ensureVisible(db, actor, row, "Run");
    const [[resource], scrubber] = await Promise.all([
      runResources(db, [run]),
      companyScrubber(c.env, db, run.companyId),
    ]);
    if (!resource) throw notFound("Run not found");
    return c.json(
      {
        ...scrubbedError(scrubber, resource),
        logExcerpt: scrubbedExcerpt(scrubber, run.logExcerpt),
      },
      200,
    );
  },
);

runRoutes.openapi(
  createRoute({
    method: "get",
    path: "/heartbeat-runs/{runId}/log",
    tags,
    summary: "A run's whole output, in order",
    security: controlAuth,
    request: { params: RunParamSchema },
    responses: { 200: json(RunLogSchema, "The log"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const runId = c.req.valid("param").runId;
    const row = await db.select().from(heartbeatRuns).where(eq(heartbeatRuns.id, runId)).get();
    const run = await ensureVisible(db, actor, row, "Run");
    const scrubber = await companyScrubber(c.env, db, run.companyId);
    const stored = await db
      .select()
      .from(heartbeatRunLogChunks)
      .where(eq(heartbeatRunLogChunks.runId, runId))
      .orderBy(asc(heartbeatRunLogChunks.seq));
    return c.json(
      {
        runId,
        chunks: scrubChunks(scrubber, stored).map((chunk) => ({
          seq: chunk.seq,
          stream: chunk.stream,
          text: chunk.text,
          createdAt: new Date(chunk.createdAt).toISOString(),
        })),
      },
      200,
    );
  },
);

runRoutes.openapi(
  createRoute({
    method: "get",
    path: "/heartbeat-runs/{runId}/events",
    tags,
    summary: "A run's transcript: the conversation its CLI had, as structured events, in order",
    description:
      "Parsed by the runner's adapter from the CLI's own output (claude_local: its stream-json; codex_local: exec --json; gemini_local: its stream-json; opencode_local: run --format json); " +
      "a process run has none. The raw output stays at /heartbeat-runs/{runId}/log. At most 2,000 " +
      "events are kept per run.",
    security: controlAuth,
    request: { params: RunParamSchema },
    responses: { 200: json(RunEventsSchema, "The transcript"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const runId = c.req.valid("param").runId;
    const row = await db.select().from(heartbeatRuns).where(eq(heartbeatRuns.id, runId)).get();
    const run = await ensureVisible(db, actor, row, "Run");
    const scrubber = await companyScrubber(c.env, db, run.companyId);
    return c.json({ runId, events: scrubber.scrubJson(await runEvents(db, runId)) }, 200);
  },
);

const RunFinishSchema = z.object({
  status: z.enum(["succeeded", "failed"]),
  error: z.string().min(1).max(1000).optional(),
  usage: z.record(z.string(), z.union([z.number(), z.string()])).optional(),
  costCents: z.int().min(0).max(100_000_000).optional(),
});

runRoutes.openapi(
  createRoute({
    method: "post",
    path: "/heartbeat-runs/{runId}/finish",
    tags,
    summary: "An http agent finishes its run (after answering its wake 202)",
    description:
      "Only with the run's own run-scoped key (the wake's apiKey). `usage` and `costCents` are recorded " +
      "as the run's cost; a failed run releases the issues it holds. 409 once the run has ended (it " +
      "timed out, or was finished or cancelled already).",
    security: controlAuth,
    request: {
      params: RunParamSchema,
      body: { content: { "application/json": { schema: RunFinishSchema } } },
    },
    responses: { 200: json(RunSchema, "The run, ended"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const runId = c.req.valid("param").runId;
    const row = await db.select().from(heartbeatRuns).where(eq(heartbeatRuns.id, runId)).get();
    const run = await ensureVisible(db, actor, row, "Run");
    if (actor.type !== "agent" || actor.runId !== run.id)
      throw forbidden("Only the run's own run-scoped key finishes a run");
    if (run.runnerId !== null) throw conflict("A runner's run ends when its process does");
    if (run.status !== "running") throw conflict(`The run has already ended (${run.status})`);
    const body = c.req.valid("json");
    await settleHttpRun(c.env, db, run, {
      ...(body.usage ? { usage: body.usage } : {}),
      ...(body.costCents !== undefined ? { costCents: body.costCents } : {}),
      ...(body.status === "failed" ? { error: body.error ?? "failed" } : {}),
    });
    const ended = await db.select().from(heartbeatRuns).where(eq(heartbeatRuns.id, runId)).get();
    const [resource] = await runResources(db, ended ? [ended] : []);
    if (!resource) throw notFound("Run not found");
    return c.json(resource, 200);
  },
);
