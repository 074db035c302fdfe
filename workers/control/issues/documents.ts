import { and, eq } from "drizzle-orm";
import type { ActorRef } from "../../core/actor";
import { authorColumns } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import {
  type IssueDocumentRow,
  type IssueRow,
  issueDocumentRevisions,
  issueDocuments,
} from "../../db/schema";
import { conflict, forbidden, notFound } from "../../http/errors";
import { type ActorNames, activityInsert, actorNames, nameOf } from "../shared";
import type { DocumentPut, IssueOpHandler } from "./operations";

export type IssueDocumentRevisionRow = typeof issueDocumentRevisions.$inferSelect;

const iso = (ms: number): string => new Date(ms).toISOString();

/** A document in a listing: everything but the body. */
/** Who created each of these rows, by name, in one lookup (people and agents of the company). */
export const creatorNames = (
  db: Db,
  companyId: string,
  rows: ReadonlyArray<{ createdByUserId: string | null; createdByAgentId: string | null }>,
): Promise<ActorNames> =>
  actorNames(db, companyId, {
    userIds: rows.map((row) => row.createdByUserId),
    agentIds: rows.map((row) => row.createdByAgentId),
  });

export const documentSummary = (row: IssueDocumentRow, names: ActorNames) => ({
  id: row.id,
  issueId: row.issueId,
  key: row.key,
  title: row.title,
  format: row.format,
  latestRevisionId: row.latestRevisionId,
  latestRevisionNumber: row.latestRevisionNumber,
  createdByAgentId: row.createdByAgentId,
  createdByUserId: row.createdByUserId,
  createdByName: nameOf(names, row.createdByUserId, row.createdByAgentId),
  createdAt: iso(row.createdAt),
  updatedAt: iso(row.updatedAt),
});

/** One document with the body of its latest revision. */
export const documentResource = (row: IssueDocumentRow, names: ActorNames) => ({
  ...documentSummary(row, names),
  body: row.latestBody,
});

export const revisionResource = (row: IssueDocumentRevisionRow, names: ActorNames) => ({
  id: row.id,
  documentId: row.documentId,
  revisionNumber: row.revisionNumber,
  title: row.title,
  changeSummary: row.changeSummary,
  body: row.body,
  createdByAgentId: row.createdByAgentId,
  createdByUserId: row.createdByUserId,
  createdByName: nameOf(names, row.createdByUserId, row.createdByAgentId),
  createdAt: iso(row.createdAt),
});

export function findDocument(db: Db, issueId: string, key: string): Promise<IssueDocumentRow | undefined> {
  return db
    .select()
    .from(issueDocuments)
    .where(and(eq(issueDocuments.issueId, issueId), eq(issueDocuments.key, key)))
    .get();
}

function documentActivity(db: Db, issue: IssueRow, actor: ActorRef, action: string, doc: IssueDocumentRow) {
  return activityInsert(
    db,
    {
      companyId: issue.companyId,
      actor,
      action,
      entityType: "document",
      entityId: doc.id,
      details: { issueId: issue.id, key: doc.key, revisionNumber: doc.latestRevisionNumber },
    },
    doc.updatedAt,
  );
}

/** Revision 1 and the document pointing at it, in one batch. */
async function createDocument(
  db: Db,
  issue: IssueRow,
  actor: ActorRef,
  key: string,
  input: DocumentPut,
  now: number,
) {
  const author = authorColumns(actor);
  const revisionId = newId();
  const doc: IssueDocumentRow = {
    id: newId(),
    companyId: issue.companyId,
    issueId: issue.id,
    key,
    title: input.title ?? null,
    format: input.format,
    latestBody: input.body,
    latestRevisionId: revisionId,
    latestRevisionNumber: 1,
    createdByUserId: author.userId,
    createdByAgentId: author.agentId,
    createdAt: now,
    updatedAt: now,
  };
  await db.batch([
    db.insert(issueDocuments).values(doc),
    db.insert(issueDocumentRevisions).values(revisionOf(doc, input, actor)),
    documentActivity(db, issue, actor, "document.created", doc),
  ]);
  return {
    status: 201 as const,
    body: documentResource(doc, await creatorNames(db, issue.companyId, [doc])),
  };
}

function revisionOf(doc: IssueDocumentRow, input: DocumentPut, actor: ActorRef): IssueDocumentRevisionRow {
  const author = authorColumns(actor);
  return {
    id: doc.latestRevisionId,
    companyId: doc.companyId,
    documentId: doc.id,
    issueId: doc.issueId,
    revisionNumber: doc.latestRevisionNumber,
    title: doc.title,
    body: input.body,
    changeSummary: input.changeSummary ?? null,
    createdByUserId: author.userId,
    createdByAgentId: author.agentId,
    createdAt: doc.updatedAt,
  };
}

/**
 * Optimistic concurrency: an update names the revision it was based on, and only the latest one
 * is accepted. Both 409s carry the current revision id so the writer can re-read and merge.
 */
function assertBase(existing: IssueDocumentRow, baseRevisionId: string | undefined): void {
  const details = { currentRevisionId: existing.latestRevisionId };
  if (baseRevisionId === undefined) throw conflict("Document update requires baseRevisionId", details);
  if (baseRevisionId !== existing.latestRevisionId)
    throw conflict("Document was updated by someone else", details);
}

/** A new revision and the document moved onto it, in one batch. */
export const putDocument: IssueOpHandler<"putDocument"> = async ({ db, issue, op, now }) => {
  const { actor, key, input } = op;
  const existing = await findDocument(db, issue.id, key);
  if (!existing) {
    if (input.baseRevisionId !== undefined) {
      throw conflict("Document does not exist; omit baseRevisionId to create it", {
        currentRevisionId: null,
      });
    }
    return createDocument(db, issue, actor, key, input, now);
  }
  assertBase(existing, input.baseRevisionId);
  const doc: IssueDocumentRow = {
    ...existing,
    // An omitted title keeps the current one; null clears it.
    title: input.title === undefined ? existing.title : input.title,
    format: input.format,
    latestBody: input.body,
    latestRevisionId: newId(),
    latestRevisionNumber: existing.latestRevisionNumber + 1,
    updatedAt: now,
  };
  await db.batch([
    db
      .update(issueDocuments)
      .set({
        title: doc.title,
        format: doc.format,
        latestBody: doc.latestBody,
        latestRevisionId: doc.latestRevisionId,
        latestRevisionNumber: doc.latestRevisionNumber,
        updatedAt: now,
      })
      .where(
        and(
          eq(issueDocuments.id, existing.id),
          eq(issueDocuments.latestRevisionId, existing.latestRevisionId),
        ),
      ),
    db.insert(issueDocumentRevisions).values(revisionOf(doc, input, actor)),
    documentActivity(db, issue, actor, "document.updated", doc),
  ]);
  return { status: 200, body: documentResource(doc, await creatorNames(db, issue.companyId, [doc])) };
};

/** Board only (the route checks too); the document goes with its whole history. */
export const deleteDocument: IssueOpHandler<"deleteDocument"> = async ({ db, issue, op, now }) => {
  if (op.actor.type !== "board") throw forbidden("Only board users may delete issue documents");
  const existing = await findDocument(db, issue.id, op.key);
  if (!existing) throw notFound("Document not found");
  await db.batch([
    db.delete(issueDocumentRevisions).where(eq(issueDocumentRevisions.documentId, existing.id)),
    db.delete(issueDocuments).where(eq(issueDocuments.id, existing.id)),
    documentActivity(db, issue, op.actor, "document.deleted", { ...existing, updatedAt: now }),
  ]);
  return { status: 200, body: { deleted: true, key: existing.key } };
};
