import { createRoute, z } from "@hono/zod-openapi";
import { asc, desc, eq } from "drizzle-orm";
import { refOf } from "../../../core/actor";
import { issueDocumentRevisions, issueDocuments } from "../../../db/schema";
import { notFound } from "../../../http/errors";
import {
  controlAuth,
  controlError,
  controlErrors,
  createRouter,
  json,
  jsonBody,
} from "../../../http/openapi";
import { controlContext, requireBoard } from "../../shared";
import {
  creatorNames,
  documentResource,
  documentSummary,
  findDocument,
  revisionResource,
} from "../documents";
import { DocumentParamSchema, IssueParamSchema, MAX_DOCUMENT_BYTES, PutDocumentBodySchema } from "../schemas";
import { findVisibleIssue } from "../store";
import { mutateIssue } from "./call";
import { issueOpResponse } from "./checkout";

/** Issue documents (plans, specs, notes) with their revision history. Mounted at /api. */
export const issueDocumentRoutes = createRouter();
const tags = ["Issue documents"];

const DocumentSummarySchema = z.object({
  id: z.string(),
  issueId: z.string(),
  key: z.string(),
  title: z.string().nullable(),
  format: z.string(),
  latestRevisionId: z.string(),
  latestRevisionNumber: z.number().int(),
  createdByAgentId: z.string().nullable(),
  createdByUserId: z.string().nullable(),
  createdByName: z
    .string()
    .nullable()
    .openapi({ description: "The creator's display name (person or agent)" }),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const DocumentSchema = DocumentSummarySchema.extend({ body: z.string() });
const RevisionSchema = z.object({
  id: z.string(),
  documentId: z.string(),
  revisionNumber: z.number().int(),
  title: z.string().nullable(),
  changeSummary: z.string().nullable(),
  body: z.string(),
  createdByAgentId: z.string().nullable(),
  createdByUserId: z.string().nullable(),
  createdByName: z.string().nullable().openapi({ description: "Who wrote this revision, by display name" }),
  createdAt: z.string(),
});

const DOCUMENT_NOT_FOUND = "Document not found";

issueDocumentRoutes.openapi(
  createRoute({
    method: "get",
    path: "/issues/{issueId}/documents",
    tags,
    summary: "The issue's documents, by key (without bodies)",
    security: controlAuth,
    request: { params: IssueParamSchema },
    responses: { 200: json(z.array(DocumentSummarySchema), "Documents"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const issue = await findVisibleIssue(db, actor, c.req.valid("param").issueId);
    const rows = await db
      .select()
      .from(issueDocuments)
      .where(eq(issueDocuments.issueId, issue.id))
      .orderBy(asc(issueDocuments.key));
    const names = await creatorNames(db, issue.companyId, rows);
    return c.json(
      rows.map((row) => documentSummary(row, names)),
      200,
    );
  },
);

issueDocumentRoutes.openapi(
  createRoute({
    method: "get",
    path: "/issues/{issueId}/documents/{key}",
    tags,
    summary: "One document with the body of its latest revision",
    security: controlAuth,
    request: { params: DocumentParamSchema },
    responses: { 200: json(DocumentSchema, "The document"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { issueId, key } = c.req.valid("param");
    const issue = await findVisibleIssue(db, actor, issueId);
    const row = await findDocument(db, issue.id, key);
    if (!row) throw notFound(DOCUMENT_NOT_FOUND);
    return c.json(documentResource(row, await creatorNames(db, issue.companyId, [row])), 200);
  },
);

issueDocumentRoutes.openapi(
  createRoute({
    method: "put",
    path: "/issues/{issueId}/documents/{key}",
    tags,
    summary: "Create a document, or add a revision to it",
    description:
      "Creating (no document under the key yet): omit baseRevisionId; answers 201 with revision 1. " +
      "Updating: send the latestRevisionId you read as baseRevisionId; answers 200 with the new revision. " +
      "409 when baseRevisionId is missing or stale (details.currentRevisionId is the latest), or sent " +
      "for a document that does not exist. format defaults to markdown; an omitted title keeps the " +
      `current one. body: at most ${MAX_DOCUMENT_BYTES} bytes of UTF-8.`,
    security: controlAuth,
    request: { params: DocumentParamSchema, ...jsonBody(PutDocumentBodySchema) },
    responses: {
      200: json(DocumentSchema, "Updated: the document at its new revision"),
      201: json(DocumentSchema, "Created: the document at revision 1"),
      ...controlErrors,
      409: controlError("baseRevisionId missing, stale, or sent for a document that does not exist"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { issueId, key } = c.req.valid("param");
    const issue = await findVisibleIssue(db, actor, issueId);
    const { format, ...rest } = c.req.valid("json");
    return issueOpResponse(
      mutateIssue(c, issue, {
        kind: "putDocument",
        actor: refOf(actor),
        key,
        input: { ...rest, format: format ?? "markdown" },
      }),
    );
  },
);

issueDocumentRoutes.openapi(
  createRoute({
    method: "get",
    path: "/issues/{issueId}/documents/{key}/revisions",
    tags,
    summary: "The document's revisions, newest first",
    security: controlAuth,
    request: { params: DocumentParamSchema },
    responses: { 200: json(z.array(RevisionSchema), "Revisions"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { issueId, key } = c.req.valid("param");
    const issue = await findVisibleIssue(db, actor, issueId);
    const doc = await findDocument(db, issue.id, key);
    if (!doc) throw notFound(DOCUMENT_NOT_FOUND);
    const rows = await db
      .select()
      .from(issueDocumentRevisions)
      .where(eq(issueDocumentRevisions.documentId, doc.id))
      .orderBy(desc(issueDocumentRevisions.revisionNumber));
    const names = await creatorNames(db, issue.companyId, rows);
    return c.json(
      rows.map((row) => revisionResource(row, names)),
      200,
    );
  },
);

issueDocumentRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/issues/{issueId}/documents/{key}",
    tags,
    summary: "Delete a document and its revisions (board only)",
    security: controlAuth,
    request: { params: DocumentParamSchema },
    responses: { 204: { description: "Deleted" }, ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { issueId, key } = c.req.valid("param");
    const issue = await findVisibleIssue(db, actor, issueId);
    requireBoard(actor, "delete issue documents");
    await mutateIssue(c, issue, { kind: "deleteDocument", actor: refOf(actor), key });
    return c.body(null, 204);
  },
);
