import { Hono } from "hono";
import type { z } from "zod";
import type { CommentSchema } from "../../control/issues";
import { failedForm, optionalText } from "../ui/board-shared";
import type { DashboardEnv } from "../ui/env";
import { failureStatus, redirectWithFlash } from "../ui/render";
import { issueApiPath } from "./model-views";
import { type IssueDocument, showIssue } from "./view";

type Comment = z.infer<typeof CommentSchema>;

/**
 * The issue page and its comment and document forms (the issue model's: model-pages.tsx; its properties
 * panel posts to quick-edit.tsx).
 */
export const issuePage = new Hono<DashboardEnv>();

const COMMENT_FIELDS = ["body"] as const;
const DOCUMENT_FIELDS = ["key", "title", "documentBody"] as const;

issuePage.get("/issues/:issueId", (c) => showIssue(c, c.req.param("issueId")));

issuePage.post("/issues/:issueId/comments", async (c) => {
  const issueId = c.req.param("issueId");
  const values = c.var.form;
  const result = await c.var.api.send<Comment>("POST", `${issueApiPath(issueId)}/comments`, {
    body: values.body ?? "",
  });
  if (!result.ok)
    return showIssue(c, issueId, {
      comment: failedForm(values, result, COMMENT_FIELDS),
      status: failureStatus(result),
    });
  return redirectWithFlash(c, `/issues/${result.data.issueId}`, "Comment added");
});

/**
 * A first revision only: PUT without baseRevisionId creates the document, and the API answers 409 for
 * a key that exists already (a new revision needs the current revision id, which this form does not
 * carry). The text field is `documentBody` because the comment form on the same page owns `body`.
 */
issuePage.post("/issues/:issueId/documents", async (c) => {
  const issueId = c.req.param("issueId");
  const values = c.var.form;
  const key = values.key?.trim() ?? "";
  if (key === "")
    return showIssue(c, issueId, {
      document: { values, errors: { key: "A key is required, e.g. plan" } },
      status: 400,
    });
  const result = await c.var.api.send<IssueDocument>(
    "PUT",
    `${issueApiPath(issueId)}/documents/${encodeURIComponent(key)}`,
    {
      body: values.documentBody ?? "",
      title: optionalText(values.title),
    },
  );
  if (!result.ok) {
    const form = failedForm(values, result, DOCUMENT_FIELDS, { body: "documentBody" });
    if (result.status === 409) {
      form.errors.key = `A document with this key exists already (${result.error})`;
      delete form.errors._form;
    }
    return showIssue(c, issueId, { document: form, status: failureStatus(result) });
  }
  return redirectWithFlash(c, `/issues/${issueId}`, `Document ${result.data.key} added`);
});
