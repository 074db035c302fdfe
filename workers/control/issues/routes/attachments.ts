import { createRoute } from "@hono/zod-openapi";
import { and, asc, eq } from "drizzle-orm";
import type { Context } from "hono";
import { sniffMimetype } from "../../../../bridge/src/protocol/mime";
import { type Actor, authorColumns, refOf } from "../../../core/actor";
import type { AppEnv, Env } from "../../../core/env";
import { iso, newId } from "../../../db/client";
import { type IssueAttachmentRow, type IssueRow, issueAttachments } from "../../../db/schema";
import { ApiError, badRequest, forbidden, notFound, titleOf } from "../../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json } from "../../../http/openapi";
import { type ActorNames, activityInsert, controlContext, nameOf } from "../../shared";
import { creatorNames } from "../documents";
import { announceOnIssue } from "../object";
import { AttachmentParamSchema, AttachmentSchema, IssueParamSchema } from "../schemas";
import { findVisibleIssue } from "../store";

/**
 * Files on an issue: the bytes in R2 (ASSETS), the metadata in D1. Anyone who may see the issue may
 * attach, list and download; the uploader or a board user may delete. Not an IssueDO operation: an
 * attachment changes no state of the issue that a read-check-write depends on.
 */
export const issueAttachmentRoutes = createRouter();
const tags = ["Issues"];

export const ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;
/** Verified by their bytes (a declaration proves nothing). */
const BINARY_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif", "application/pdf"];
/** Verified as UTF-8 text. */
const TEXT_TYPES = ["text/plain", "text/markdown", "text/csv", "application/json"];
export const ATTACHMENT_TYPES = [...BINARY_TYPES, ...TEXT_TYPES];

const r2Key = (issue: IssueRow, id: string) =>
  `companies/${issue.companyId}/issues/${issue.id}/attachments/${id}`;
const unsupported = (detail: string) => new ApiError(415, titleOf(415), detail);

/** The file's own name without any path, control characters or quotes; bounded. */
function cleanFilename(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  const cleaned = base
    .replace(/[\p{Cc}"]/gu, "")
    .trim()
    .slice(0, 255);
  return cleaned === "" || cleaned === "." || cleaned === ".." ? "attachment" : cleaned;
}

function assertContentMatches(bytes: Uint8Array, declared: string): void {
  if (BINARY_TYPES.includes(declared)) {
    const actual = sniffMimetype(bytes);
    if (actual !== declared)
      throw badRequest(
        `file is declared as ${declared} but its content is ${actual ?? "not a known format"}`,
      );
    return;
  }
  try {
    new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw badRequest(`file is declared as ${declared} but is not UTF-8 text`);
  }
}

/** The upload: 415 unless multipart with an allowed type, 413 above the limit, 400 if empty or lying. */
async function readUpload(c: Context<AppEnv>) {
  if (!(c.req.header("content-type") ?? "").toLowerCase().startsWith("multipart/form-data"))
    throw unsupported("Send the file as multipart/form-data in the field `file`");
  let form: Record<string, string | File | (string | File)[]>;
  try {
    form = await c.req.parseBody();
  } catch {
    throw badRequest("Malformed multipart body");
  }
  const file = form.file;
  if (!(file instanceof File)) throw badRequest("file is required");
  const declared = file.type.split(";")[0]?.trim().toLowerCase() ?? "";
  if (!ATTACHMENT_TYPES.includes(declared))
    throw unsupported(
      `file type ${declared || "(none)"} is not allowed; use one of ${ATTACHMENT_TYPES.join(", ")}`,
    );
  if (file.size > ATTACHMENT_MAX_BYTES)
    throw new ApiError(413, titleOf(413), `The file exceeds ${ATTACHMENT_MAX_BYTES} bytes (10 MiB)`);
  if (file.size === 0) throw badRequest("file is empty");
  const bytes = new Uint8Array(await file.arrayBuffer());
  assertContentMatches(bytes, declared);
  return { bytes, contentType: declared, filename: cleanFilename(file.name) };
}

const attachmentResource = (row: IssueAttachmentRow, names: ActorNames) => ({
  id: row.id,
  companyId: row.companyId,
  issueId: row.issueId,
  filename: row.filename,
  contentType: row.contentType,
  byteSize: row.byteSize,
  createdByUserId: row.createdByUserId,
  createdByAgentId: row.createdByAgentId,
  createdByName: nameOf(names, row.createdByUserId, row.createdByAgentId),
  createdAt: iso(row.createdAt),
  downloadPath: `/api/issues/${row.issueId}/attachments/${row.id}/content`,
});

/** R2 first, then the row with its activity; a failed batch (the issue deleted meanwhile) removes the object. */
async function storeAttachment(c: Context<AppEnv>, actor: Actor, issue: IssueRow) {
  const { db } = controlContext(c);
  const file = await readUpload(c);
  const id = newId();
  const key = r2Key(issue, id);
  await c.env.ASSETS.put(key, file.bytes, { httpMetadata: { contentType: file.contentType } });
  const author = authorColumns(refOf(actor));
  const now = Date.now();
  const row: IssueAttachmentRow = {
    id,
    companyId: issue.companyId,
    issueId: issue.id,
    filename: file.filename,
    contentType: file.contentType,
    byteSize: file.bytes.byteLength,
    r2Key: key,
    createdByUserId: author.userId,
    createdByAgentId: author.agentId,
    createdAt: now,
  };
  try {
    await db.batch([
      db.insert(issueAttachments).values(row),
      activityInsert(
        db,
        {
          companyId: issue.companyId,
          actor: refOf(actor),
          action: "issue.attachment_added",
          entityType: "issue",
          entityId: issue.id,
          details: {
            attachmentId: id,
            filename: row.filename,
            contentType: row.contentType,
            byteSize: row.byteSize,
          },
        },
        now,
      ),
    ]);
  } catch (error) {
    await c.env.ASSETS.delete(key).catch(() => undefined);
    throw error;
  }
  return row;
}

/** The issue page lists attachments live: it hears of one added or removed on the issue's feed. */
const announceAttachment = (env: Env, row: IssueAttachmentRow) =>
  announceOnIssue(env, {
    kind: "attachment.changed",
    companyId: row.companyId,
    issueId: row.issueId,
    attachmentId: row.id,
  });

async function visibleAttachment(c: Context<AppEnv>, params: { issueId: string; attachmentId: string }) {
  const { actor, db } = controlContext(c);
  const issue = await findVisibleIssue(db, actor, params.issueId);
  const row = await db
    .select()
    .from(issueAttachments)
    .where(and(eq(issueAttachments.id, params.attachmentId), eq(issueAttachments.issueId, issue.id)))
    .get();
  if (!row) throw notFound("Attachment not found");
  return { issue, row };
}

issueAttachmentRoutes.openapi(
  createRoute({
    method: "post",
    path: "/issues/{issueId}/attachments",
    tags,
    summary: "Attach a file to an issue",
    description:
      "multipart/form-data with the file in `file`, at most 10 MiB, of type PNG, JPEG, WebP, GIF or PDF " +
      "(checked by its bytes) or plain text, Markdown, CSV or JSON (must be UTF-8).",
    security: controlAuth,
    request: {
      params: IssueParamSchema,
      body: {
        content: {
          "multipart/form-data": {
            schema: {
              type: "object",
              properties: { file: { type: "string", format: "binary" } },
              required: ["file"],
            },
          },
        },
        required: true,
      },
    },
    responses: {
      201: json(AttachmentSchema, "Stored"),
      ...controlErrors,
      413: controlError("Larger than 10 MiB"),
      415: controlError("Not multipart/form-data, or a type that is not allowed"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const issue = await findVisibleIssue(db, actor, c.req.valid("param").issueId);
    const stored = await storeAttachment(c, actor, issue);
    await announceAttachment(c.env, stored);
    return c.json(attachmentResource(stored, await creatorNames(db, issue.companyId, [stored])), 201);
  },
);

issueAttachmentRoutes.openapi(
  createRoute({
    method: "get",
    path: "/issues/{issueId}/attachments",
    tags,
    summary: "The issue's attachments, oldest first",
    security: controlAuth,
    request: { params: IssueParamSchema },
    responses: { 200: json(AttachmentSchema.array(), "Attachments"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const issue = await findVisibleIssue(db, actor, c.req.valid("param").issueId);
    const rows = await db
      .select()
      .from(issueAttachments)
      .where(eq(issueAttachments.issueId, issue.id))
      .orderBy(asc(issueAttachments.createdAt), asc(issueAttachments.id));
    const names = await creatorNames(db, issue.companyId, rows);
    return c.json(
      rows.map((row) => attachmentResource(row, names)),
      200,
    );
  },
);

issueAttachmentRoutes.openapi(
  createRoute({
    method: "get",
    path: "/issues/{issueId}/attachments/{attachmentId}/content",
    tags,
    summary: "Download an attachment (as a file, never rendered inline)",
    security: controlAuth,
    request: { params: AttachmentParamSchema },
    responses: {
      200: {
        description: "The file, with the content type it was uploaded with",
        content: { "*/*": { schema: { type: "string", format: "binary" } } },
      },
      ...controlErrors,
    },
  }),
  async (c) => {
    const { row } = await visibleAttachment(c, c.req.valid("param"));
    const object = await c.env.ASSETS.get(row.r2Key);
    if (!object) throw notFound("Attachment content not found");
    return c.body(object.body, 200, {
      "content-type": row.contentType,
      "content-length": String(row.byteSize),
      "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(row.filename)}`,
      "x-content-type-options": "nosniff",
      "content-security-policy": "sandbox",
    });
  },
);

issueAttachmentRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/issues/{issueId}/attachments/{attachmentId}",
    tags,
    summary: "Delete an attachment (its uploader or a board user)",
    security: controlAuth,
    request: { params: AttachmentParamSchema },
    responses: { 204: { description: "Deleted" }, ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { issue, row } = await visibleAttachment(c, c.req.valid("param"));
    if (actor.type === "agent" && row.createdByAgentId !== actor.agentId)
      throw forbidden("Only the agent that attached a file, or a board user, may delete it");
    await db.batch([
      db.delete(issueAttachments).where(eq(issueAttachments.id, row.id)),
      activityInsert(
        db,
        {
          companyId: issue.companyId,
          actor: refOf(actor),
          action: "issue.attachment_deleted",
          entityType: "issue",
          entityId: issue.id,
          details: { attachmentId: row.id, filename: row.filename },
        },
        Date.now(),
      ),
    ]);
    await c.env.ASSETS.delete(row.r2Key);
    await announceAttachment(c.env, row);
    return c.body(null, 204);
  },
);
