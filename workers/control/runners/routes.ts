import { createRoute, z } from "@hono/zod-openapi";
import { and, desc, eq, isNull } from "drizzle-orm";
import { runnerTokens } from "../../auth/prefixed-token";
import { type ActorRef, refOf } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type RunnerRow, runnerCompanies, runners } from "../../db/schema";
import { conflict, notFound } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { activityInsert, companyForActor, controlContext, requireBoard } from "../shared";
import { runDispatcher } from "../wakes";
import {
  CompanyParamSchema,
  CompanyRunnerParamSchema,
  CreateCompanyRunnerBodySchema,
  CreatedRunnerSchema,
  CreateRunnerBodySchema,
  RunnerParamSchema,
  RunnerSchema,
} from "./schemas";
import {
  createdAndOwned,
  listedCompanies,
  ownRunner,
  requireOwner,
  runnerResource,
  servesCompany,
} from "./store";

/**
 * Runners: the machines that run a company's agents, registered by its owners like self-hosted CI
 * runners. A token is shown once; a revoked runner is cut off at once. Board users only: an agent
 * cannot choose where agents run.
 */
export const runnerRoutes = createRouter();
const tags = ["Runners"];

function logEntries(
  db: Db,
  actor: ActorRef,
  runner: RunnerRow,
  companyIds: string[],
  action: string,
  now: number,
) {
  return companyIds.map((companyId) =>
    activityInsert(
      db,
      { companyId, actor, action, entityType: "runner", entityId: runner.id, details: { name: runner.name } },
      now,
    ),
  );
}

async function register(
  db: Db,
  actor: ActorRef & { type: "board" },
  name: string,
  coverage: { companyIds: string[] } | { allCompanies: true },
  maxConcurrentRuns: number | undefined,
) {
  const generated = await runnerTokens.generate();
  const now = Date.now();
  const row: RunnerRow = {
    id: newId(),
    ownerUserId: actor.userId,
    name,
    tokenHash: generated.hash,
    tokenPrefix: generated.prefix,
    allCompanies: "allCompanies" in coverage,
    capabilities: null,
    version: null,
    connectedAt: null,
    lastSeenAt: null,
    maxConcurrentRuns: maxConcurrentRuns ?? null,
    createdAt: now,
    revokedAt: null,
  };
  // allCompanies: the companies its owner created, listed by id like any others (never joined ones).
  const listed =
    "companyIds" in coverage ? [...new Set(coverage.companyIds)] : await createdAndOwned(db, actor.userId);
  await db.batch([
    db.insert(runners).values(row),
    ...listed.map((companyId) =>
      db.insert(runnerCompanies).values({ runnerId: row.id, companyId, createdAt: now }),
    ),
    ...logEntries(db, actor, row, listed, "runner.registered", now),
  ]);
  return { runner: runnerResource(row, listed, now), token: generated.token };
}

const createdResponses = {
  201: json(CreatedRunnerSchema, "The runner and its token (shown once)"),
  ...controlErrors,
};

runnerRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/runners",
    tags,
    summary: "Register a runner for the company (its owners)",
    description:
      "Answers the token once; only its SHA-256 is kept. The runner receives only runs of the companies " +
      "it serves, with only their secrets. A member who is not an owner gets 403.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(CreateCompanyRunnerBodySchema) },
    responses: createdResponses,
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    requireBoard(actor, "register runners");
    await requireOwner(db, actor.userId, company.id, "register runners");
    const board = { type: "board" as const, userId: actor.userId };
    const body = c.req.valid("json");
    const coverage = { companyIds: [company.id] };
    return c.json(await register(db, board, body.name, coverage, body.maxConcurrentRuns), 201);
  },
);

runnerRoutes.openapi(
  createRoute({
    method: "post",
    path: "/runners",
    tags,
    summary: "Register a runner for several of your companies, or every company you created",
    description:
      "`companyIds`: companies you own (404 for one you cannot see, 403 for one you are only a member of). " +
      "`allCompanies: true`: every company you created and own, and each company you create later; never " +
      "one you join by invite or are made owner of (attach the runner to it explicitly). Either way the " +
      "answer lists the companies it serves by id.",
    security: controlAuth,
    request: jsonBody(CreateRunnerBodySchema),
    responses: createdResponses,
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    requireBoard(actor, "register runners");
    const body = c.req.valid("json");
    for (const companyId of body.companyIds ?? []) {
      await companyForActor(db, actor, companyId);
      await requireOwner(db, actor.userId, companyId, "register runners");
    }
    const coverage = body.companyIds ? { companyIds: body.companyIds } : { allCompanies: true as const };
    const board = { type: "board" as const, userId: actor.userId };
    return c.json(await register(db, board, body.name, coverage, body.maxConcurrentRuns), 201);
  },
);

runnerRoutes.openapi(
  createRoute({
    method: "get",
    path: "/runners",
    tags,
    summary: "Your runners, newest first (revoked ones included)",
    security: controlAuth,
    responses: { 200: json(z.array(RunnerSchema), "Runners"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    requireBoard(actor, "list runners");
    const rows = await db
      .select()
      .from(runners)
      .where(eq(runners.ownerUserId, actor.userId))
      .orderBy(desc(runners.createdAt));
    const listed = await listedCompanies(
      db,
      rows.map((row) => row.id),
    );
    return c.json(
      rows.map((row) => runnerResource(row, listed.get(row.id) ?? [])),
      200,
    );
  },
);

runnerRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/runners",
    tags,
    summary: "The live runners that serve the company (its board)",
    description: "Each with last-seen time, capabilities and version; never a token.",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(z.array(RunnerSchema), "Runners"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    requireBoard(actor, "list runners");
    const serving = await db
      .select()
      .from(runners)
      .where(and(isNull(runners.revokedAt), servesCompany(company.id)))
      .orderBy(desc(runners.createdAt));
    const listed = await listedCompanies(
      db,
      serving.map((row) => row.id),
    );
    return c.json(
      serving.map((row) => runnerResource(row, listed.get(row.id) ?? [])),
      200,
    );
  },
);

runnerRoutes.openapi(
  createRoute({
    method: "put",
    path: "/companies/{companyId}/runners/{runnerId}",
    tags,
    summary: "Let one of your runners serve this company too (you must own both)",
    description:
      "The only way a company you joined by invite gets served by your runners, `allCompanies` ones " +
      "included: the company's agents then run on that machine as its user.",
    security: controlAuth,
    request: { params: CompanyRunnerParamSchema },
    responses: {
      200: json(RunnerSchema, "The runner"),
      ...controlErrors,
      409: controlError("The runner is revoked"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const params = c.req.valid("param");
    const company = await companyForActor(db, actor, params.companyId);
    requireBoard(actor, "attach runners");
    await requireOwner(db, actor.userId, company.id, "attach runners");
    const runner = await ownRunner(db, actor.userId, params.runnerId);
    if (runner.revokedAt !== null) throw conflict("The runner is revoked");
    const now = Date.now();
    const added = await db
      .insert(runnerCompanies)
      .values({ runnerId: runner.id, companyId: company.id, createdAt: now })
      .onConflictDoNothing()
      .returning({ runnerId: runnerCompanies.runnerId });
    if (added.length > 0) {
      const entry = { companyId: company.id, actor: refOf(actor), action: "runner.attached" };
      await activityInsert(
        db,
        { ...entry, entityType: "runner", entityId: runner.id, details: { name: runner.name } },
        now,
      );
    }
    const listed = await listedCompanies(db, [runner.id]);
    return c.json(runnerResource(runner, listed.get(runner.id) ?? []), 200);
  },
);

runnerRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/companies/{companyId}/runners/{runnerId}",
    tags,
    summary: "Stop a runner serving this company (any owner of the company)",
    description:
      "Any owner of the company may detach any runner serving it, whoever registered it (an " +
      "`allCompanies` one too); the runner keeps serving its other companies. Its next claim no longer " +
      "takes this company's runs; runs it already holds finish. Only the runner's owner can attach it again.",
    security: controlAuth,
    request: { params: CompanyRunnerParamSchema },
    responses: {
      204: { description: "Detached" },
      ...controlErrors,
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const params = c.req.valid("param");
    const company = await companyForActor(db, actor, params.companyId);
    requireBoard(actor, "detach runners");
    await requireOwner(db, actor.userId, company.id, "detach runners");
    const runner = await db.select().from(runners).where(eq(runners.id, params.runnerId)).get();
    const listed = runner ? await listedCompanies(db, [runner.id]) : new Map<string, string[]>();
    if (!runner) throw notFound("Runner not found");
    if (!listed.get(runner.id)?.includes(company.id)) throw notFound("Runner not found");
    const now = Date.now();
    await db.batch([
      db
        .delete(runnerCompanies)
        .where(and(eq(runnerCompanies.runnerId, runner.id), eq(runnerCompanies.companyId, company.id))),
      ...logEntries(db, refOf(actor), runner, [company.id], "runner.detached", now),
    ]);
    return c.body(null, 204);
  },
);

runnerRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/runners/{runnerId}",
    tags,
    summary: "Revoke one of your runners: its token stops working and its links close at once",
    description:
      "Runs it was executing end as failed (runner_revoked) and release the issues they held; its " +
      "processes are stopped by the runner when its link closes.",
    security: controlAuth,
    request: { params: RunnerParamSchema },
    responses: { 204: { description: "Revoked" }, ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    requireBoard(actor, "revoke runners");
    const runner = await ownRunner(db, actor.userId, c.req.valid("param").runnerId);
    if (runner.revokedAt === null) {
      const now = Date.now();
      const listed = (await listedCompanies(db, [runner.id])).get(runner.id) ?? [];
      await db.batch([
        db.update(runners).set({ revokedAt: now, connectedAt: null }).where(eq(runners.id, runner.id)),
        ...logEntries(db, refOf(actor), runner, listed, "runner.revoked", now),
      ]);
    }
    // After the commit: a claim racing with this sees the revocation in D1; the links close now.
    await runDispatcher(c.env).disconnectRunner(runner.id);
    return c.body(null, 204);
  },
);
