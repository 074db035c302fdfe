// Issue documents through HTTP in workerd: create, optimistic-concurrency updates (baseRevisionId),
// the revision history, board-only delete, key and body validation, and tenant isolation.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import {
  activityOf,
  type BoardUser,
  boardUser,
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  seedCompany,
  seedIssue,
  seedTenant,
} from "../helpers";

interface DocumentBody {
  id: string;
  issueId: string;
  key: string;
  title: string | null;
  format: string;
  body?: string;
  latestRevisionId: string;
  latestRevisionNumber: number;
  createdByAgentId: string | null;
  createdByUserId: string | null;
}

interface RevisionBody {
  id: string;
  revisionNumber: number;
  title: string | null;
  changeSummary: string | null;
  body: string;
  createdByAgentId: string | null;
  createdByUserId: string | null;
  createdAt: string;
}

interface ErrorBody {
  error: string;
  details?: { currentRevisionId: string | null };
}

const docPath = (issueId: string, key: string) => `/api/issues/${issueId}/documents/${key}`;

const put = <T = DocumentBody>(
  issueId: string,
  key: string,
  headers: Record<string, string>,
  body: unknown,
) => call<T>("PUT", docPath(issueId, key), { headers, body });

const documentRow = (issueId: string, key: string) =>
  env.DB.prepare("SELECT * FROM issue_documents WHERE issue_id = ? AND key = ?")
    .bind(issueId, key)
    .first<{ id: string; latest_body: string; latest_revision_id: string; latest_revision_number: number }>();

const revisionRows = (documentId: string) =>
  env.DB.prepare(
    "SELECT id, revision_number, body FROM issue_document_revisions WHERE document_id = ? ORDER BY revision_number",
  )
    .bind(documentId)
    .all<{ id: string; revision_number: number; body: string }>()
    .then((result) => result.results);

const actionsOf = async (entityId: string) => (await activityOf(entityId)).map((row) => row.action);

let board: BoardUser;
let company: SeededCompany;
let agent: SeededAgent;

beforeAll(async () => {
  ({ board, company, agent } = await seedTenant());
});

describe("PUT /api/issues/:id/documents/:key", () => {
  it("creates revision 1 (201), then updates on the latest base (200); rows and revisions agree", async () => {
    const issue = await seedIssue(company);
    const created = await put(issue.id, "plan", agent.headers, { body: "# Plan\n\nv1", title: "Plan" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      issueId: issue.id,
      key: "plan",
      title: "Plan",
      format: "markdown",
      body: "# Plan\n\nv1",
      latestRevisionNumber: 1,
      createdByAgentId: agent.id,
      createdByUserId: null,
    });

    const updated = await put(issue.id, "plan", board.headers, {
      body: "# Plan\n\nv2",
      changeSummary: "tightened scope",
      baseRevisionId: created.body.latestRevisionId,
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({
      id: created.body.id,
      body: "# Plan\n\nv2",
      latestRevisionNumber: 2,
    });
    expect(updated.body.title).toBe("Plan");
    expect(updated.body.latestRevisionId).not.toBe(created.body.latestRevisionId);

    const row = await documentRow(issue.id, "plan");
    expect(row).toMatchObject({
      latest_body: "# Plan\n\nv2",
      latest_revision_id: updated.body.latestRevisionId,
      latest_revision_number: 2,
    });
    expect(await revisionRows(created.body.id)).toEqual([
      { id: created.body.latestRevisionId, revision_number: 1, body: "# Plan\n\nv1" },
      { id: updated.body.latestRevisionId, revision_number: 2, body: "# Plan\n\nv2" },
    ]);
    expect(await actionsOf(created.body.id)).toEqual(["document.created", "document.updated"]);
  });

  it("answers 409 for an update without baseRevisionId, with the current revision id", async () => {
    const issue = await seedIssue(company);
    const created = await put(issue.id, "notes", agent.headers, { body: "one", format: "text" });
    expect(created.status).toBe(201);
    const res = await put<ErrorBody>(issue.id, "notes", agent.headers, { body: "two" });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("Document update requires baseRevisionId");
    expect(res.body.details).toEqual({ currentRevisionId: created.body.latestRevisionId });
    expect((await documentRow(issue.id, "notes"))?.latest_body).toBe("one");
  });

  it("answers 409 for a stale baseRevisionId: the second of two writers on one base loses", async () => {
    const issue = await seedIssue(company);
    const created = await put(issue.id, "spec", agent.headers, { body: "base" });
    const base = created.body.latestRevisionId;
    const first = await put(issue.id, "spec", agent.headers, { body: "mine", baseRevisionId: base });
    expect(first.status).toBe(200);
    const second = await put<ErrorBody>(issue.id, "spec", board.headers, {
      body: "theirs",
      baseRevisionId: base,
    });
    expect(second.status).toBe(409);
    expect(second.body.error).toBe("Document was updated by someone else");
    expect(second.body.details).toEqual({ currentRevisionId: first.body.latestRevisionId });
    expect((await documentRow(issue.id, "spec"))?.latest_body).toBe("mine");
    expect((await revisionRows(created.body.id)).length).toBe(2);
  });

  it("answers 409 for baseRevisionId on a document that does not exist (nothing created)", async () => {
    const issue = await seedIssue(company);
    const res = await put(issue.id, "ghost", agent.headers, {
      body: "x",
      baseRevisionId: crypto.randomUUID(),
    });
    expect(res.status).toBe(409);
    expect(await documentRow(issue.id, "ghost")).toBeNull();
  });

  it("serialises concurrent creates of one key: one 201, the others 409", async () => {
    const issue = await seedIssue(company);
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => put(issue.id, "race", agent.headers, { body: `writer ${i}` })),
    );
    expect(results.map((res) => res.status).sort()).toEqual([201, 409, 409, 409, 409]);
    const row = await documentRow(issue.id, "race");
    expect((await revisionRows(row?.id ?? "")).length).toBe(1);
  });

  it("validates the key, the body size and the fields (400, nothing written)", async () => {
    const issue = await seedIssue(company);
    for (const key of ["Plan", "-plan", "a b", "x".repeat(65), "plan%2Fsub"]) {
      expect((await put(issue.id, key, agent.headers, { body: "x" })).status, key).toBe(400);
    }
    const tooBig = "a".repeat(512 * 1024 + 1);
    expect((await put(issue.id, "big", agent.headers, { body: tooBig })).status).toBe(400);
    expect((await put(issue.id, "big", agent.headers, { body: "é".repeat(256 * 1024 + 1) })).status).toBe(
      400,
    );
    expect((await put(issue.id, "big", agent.headers, { body: "a".repeat(512 * 1024) })).status).toBe(201);
    for (const body of [{}, { body: 1 }, { body: "x", format: "html" }, { body: "x", extra: true }]) {
      expect((await put(issue.id, "fields", agent.headers, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect(await documentRow(issue.id, "fields")).toBeNull();
    expect((await put(issue.id, "a.b_c-9", agent.headers, { body: "ok" })).status).toBe(201);
  });
});

describe("reading documents", () => {
  it("lists without bodies, gets one with its body, and lists revisions newest first", async () => {
    const issue = await seedIssue(company);
    const plan = await put(issue.id, "plan", agent.headers, { body: "p1", title: "Plan" });
    await put(issue.id, "plan", board.headers, {
      body: "p2",
      title: "Plan v2",
      changeSummary: "second",
      baseRevisionId: plan.body.latestRevisionId,
    });
    await put(issue.id, "notes", agent.headers, { body: "n1" });

    const list = await call<DocumentBody[]>("GET", `/api/issues/${issue.id}/documents`, {
      headers: agent.headers,
    });
    expect(list.status).toBe(200);
    expect(list.body.map((doc) => [doc.key, doc.latestRevisionNumber])).toEqual([
      ["notes", 1],
      ["plan", 2],
    ]);
    expect(list.body.every((doc) => !("body" in doc))).toBe(true);

    const one = await call<DocumentBody>("GET", docPath(issue.id, "plan"), { headers: board.headers });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ key: "plan", title: "Plan v2", body: "p2", latestRevisionNumber: 2 });

    const revisions = await call<RevisionBody[]>("GET", `${docPath(issue.id, "plan")}/revisions`, {
      headers: agent.headers,
    });
    expect(revisions.status).toBe(200);
    expect(revisions.body.map((rev) => [rev.revisionNumber, rev.body, rev.title, rev.changeSummary])).toEqual(
      [
        [2, "p2", "Plan v2", "second"],
        [1, "p1", "Plan", null],
      ],
    );
    expect(revisions.body[0]).toMatchObject({ createdByUserId: board.userId, createdByAgentId: null });
    expect(revisions.body[1]).toMatchObject({ createdByAgentId: agent.id, createdByUserId: null });
  });

  it("answers 404 for a missing document, an unknown issue and another company's issue", async () => {
    const issue = await seedIssue(company);
    await put(issue.id, "plan", agent.headers, { body: "secret plan" });
    expect((await call("GET", docPath(issue.id, "nope"), { headers: agent.headers })).status).toBe(404);
    expect(
      (await call("GET", `${docPath(issue.id, "nope")}/revisions`, { headers: agent.headers })).status,
    ).toBe(404);
    const unknown = crypto.randomUUID();
    expect((await call("GET", `/api/issues/${unknown}/documents`, { headers: agent.headers })).status).toBe(
      404,
    );

    const stranger = await boardUser();
    const other = await seedCompany(stranger);
    const outsider = await seedAgent(other.id);
    for (const headers of [stranger.headers, outsider.headers]) {
      expect((await call("GET", `/api/issues/${issue.id}/documents`, { headers })).status).toBe(404);
      expect((await call("GET", docPath(issue.id, "plan"), { headers })).status).toBe(404);
      expect((await call("GET", `${docPath(issue.id, "plan")}/revisions`, { headers })).status).toBe(404);
      expect((await put(issue.id, "plan", headers, { body: "overwrite" })).status).toBe(404);
      expect((await call("DELETE", docPath(issue.id, "plan"), { headers })).status).toBe(404);
    }
    expect((await documentRow(issue.id, "plan"))?.latest_body).toBe("secret plan");
  });
});

describe("DELETE /api/issues/:id/documents/:key", () => {
  it("is board only: 403 for agents, 204 for the board, and the revisions go too", async () => {
    const issue = await seedIssue(company);
    const created = await put(issue.id, "plan", agent.headers, { body: "v1" });
    await put(issue.id, "plan", agent.headers, { body: "v2", baseRevisionId: created.body.latestRevisionId });

    expect((await call("DELETE", docPath(issue.id, "plan"), { headers: agent.headers })).status).toBe(403);
    expect(await documentRow(issue.id, "plan")).not.toBeNull();

    const res = await call("DELETE", docPath(issue.id, "plan"), { headers: board.headers });
    expect(res.status).toBe(204);
    expect(await documentRow(issue.id, "plan")).toBeNull();
    expect(await revisionRows(created.body.id)).toEqual([]);
    expect(await actionsOf(created.body.id)).toEqual([
      "document.created",
      "document.updated",
      "document.deleted",
    ]);
    expect((await call("DELETE", docPath(issue.id, "plan"), { headers: board.headers })).status).toBe(404);
    // The key is free again: a new document starts over at revision 1.
    const again = await put(issue.id, "plan", agent.headers, { body: "fresh" });
    expect(again.status).toBe(201);
    expect(again.body.latestRevisionNumber).toBe(1);
  });
});
