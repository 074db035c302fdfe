import { createRoute, z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { refOf } from "../../core/actor";
import { iso } from "../../db/client";
import { companyLines } from "../../db/schema";
import { loadAccessibleSession } from "../../gateway/sessions";
import { ApiError, notFound } from "../../http/errors";
import { controlAuth, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { activityInsert, companyForActor, controlContext, requireBoard, requireOwner } from "../shared";
import { findLine } from "./store";

/**
 * The company's WhatsApp line. Sessions belong to users; a company has none of its own. An owner
 * links one of their sessions (one they may send on) as the line, and the company's agents reach
 * WhatsApp only through it, as that owner, under the board's policy (docs/mcp.md "Governance").
 */
export const lineRoutes = createRouter();
const tags = ["Companies"];

const CompanyParamSchema = z.object({ companyId: z.string().min(1).max(100) });

const LineSchema = z
  .object({
    companyId: z.string(),
    sessionId: z.string().openapi({ description: "The session's public id (`sess_…`)" }),
    sessionName: z.string(),
    sessionStatus: z.string(),
    linkedByUserId: z.string(),
    createdAt: z.string().openapi({ format: "date-time" }),
    updatedAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("CompanyLine");

const PutLineBodySchema = z
  .strictObject({
    sessionId: z
      .string()
      .min(1)
      .max(64)
      .openapi({ description: "One of your sessions you may send on: its public id or internal id" }),
  })
  .openapi("CompanyLineBody");

const lineNotFound = () => notFound("Line not found", "This company has no WhatsApp line");

lineRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/line",
    tags,
    summary: "The company's WhatsApp line (404 when it has none)",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(LineSchema, "The line"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const found = await findLine(db, company.id);
    if (!found) throw lineNotFound();
    return c.json(lineResource(found), 200);
  },
);

lineRoutes.openapi(
  createRoute({
    method: "put",
    path: "/companies/{companyId}/line",
    tags,
    summary: "Link one of your WhatsApp sessions as the company's line (owners only)",
    description:
      "The company's agents then send and read on this session as you, under the board's MCP policy. " +
      "Only a session you may send on (yours, or shared with you as operator); any other id is 404. " +
      "Replaces a previous line.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(PutLineBodySchema) },
    responses: { 200: json(LineSchema, "The line"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    requireBoard(actor, "link the company's line");
    await requireOwner(db, actor, company.id, "link the company's line");
    // The request's own principal, so a scoped key's session limit applies to what it may link.
    const session = await sessionTheOwnerMaySendOn(db, c.get("principal"), c.req.valid("json").sessionId);
    const now = Date.now();
    const values = { sessionId: session.id, linkedByUserId: actor.userId, updatedAt: now };
    await db.batch([
      db
        .insert(companyLines)
        .values({ companyId: company.id, ...values, createdAt: now })
        .onConflictDoUpdate({ target: companyLines.companyId, set: values }),
      activityInsert(db, {
        companyId: company.id,
        actor: refOf(actor),
        action: "company.line_linked",
        entityType: "company",
        entityId: company.id,
        details: { line: session.sessionId },
      }),
    ]);
    const found = await findLine(db, company.id);
    if (!found) throw lineNotFound();
    return c.json(lineResource(found), 200);
  },
);

lineRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/companies/{companyId}/line",
    tags,
    summary: "Unlink the company's line (owners only); agents then have no WhatsApp",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 204: { description: "Unlinked" }, ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    requireBoard(actor, "unlink the company's line");
    await requireOwner(db, actor, company.id, "unlink the company's line");
    const found = await findLine(db, company.id);
    if (!found) throw lineNotFound();
    await db.batch([
      db.delete(companyLines).where(eq(companyLines.companyId, company.id)),
      activityInsert(db, {
        companyId: company.id,
        actor: refOf(actor),
        action: "company.line_unlinked",
        entityType: "company",
        entityId: company.id,
        details: { line: found.session.sessionId },
      }),
    ]);
    return c.body(null, 204);
  },
);

/**
 * A session the owner may send on. Any refusal (unknown, not theirs, shared to read only) is the
 * same 404: the line must be a session they could send on themselves.
 */
async function sessionTheOwnerMaySendOn(
  db: Parameters<typeof loadAccessibleSession>[0],
  caller: Parameters<typeof loadAccessibleSession>[1],
  sessionId: string,
) {
  try {
    return await loadAccessibleSession(db, caller, sessionId, "operate");
  } catch (error) {
    if (error instanceof ApiError) throw notFound("Session not found", "No session of yours you may send on");
    throw error;
  }
}

function lineResource(found: NonNullable<Awaited<ReturnType<typeof findLine>>>) {
  return {
    companyId: found.line.companyId,
    sessionId: found.session.sessionId,
    sessionName: found.session.name,
    sessionStatus: found.session.status,
    linkedByUserId: found.line.linkedByUserId,
    createdAt: iso(found.line.createdAt),
    updatedAt: iso(found.line.updatedAt),
  };
}
