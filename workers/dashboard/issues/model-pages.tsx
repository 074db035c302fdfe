import type { Context } from "hono";
import { Hono } from "hono";
import type { z } from "zod";
import type { UpdatedIssueSchema } from "../../control/issues";
import { PageError } from "../ui/api-client";
import { failedForm } from "../ui/board-shared";
import type { FormState } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { failureStatus, redirectWithFlash } from "../ui/render";
import { type Attachment, issueApiPath, type Question } from "./model-views";
import { showIssue } from "./view";

/**
 * The issue model's forms on the issue page: blockers, questions and answers, attachments (upload and
 * download) and Cancel (also from the board). Each is one API call as the signed-in person, so the
 * API's permissions (viewers 403), tenancy (404) and messages apply unchanged.
 */
export const issueModelPages = new Hono<DashboardEnv>();

type UpdatedIssue = z.infer<typeof UpdatedIssueSchema>;
type IssueContext = Context<DashboardEnv>;

/** A message that belongs to no field of the form goes next to its only field. */
function onField(form: FormState, field: string): FormState {
  const message = form.errors._form;
  if (message && !form.errors[field]) {
    form.errors[field] = message;
    delete form.errors._form;
  }
  return form;
}

/** "ACM-3, ACM-7" (identifiers or ids) → issue ids, each looked up through the API as the viewer. */
async function resolveIssueKeys(
  c: IssueContext,
  text: string,
): Promise<{ ids: string[] } | { unknown: string[] }> {
  const keys = [...new Set(text.split(/[\s,]+/).filter((key) => key !== ""))];
  const found = await Promise.all(
    keys.map(async (key) => ({ key, read: await c.var.api.read<{ id: string }>(issueApiPath(key)) })),
  );
  const unknown = found.filter(({ read }) => !read.ok).map(({ key }) => key);
  if (unknown.length > 0) return { unknown };
  return { ids: found.flatMap(({ read }) => (read.ok ? [read.data.id] : [])) };
}

issueModelPages.post("/issues/:issueId/blockers", async (c) => {
  const issueId = c.req.param("issueId");
  const values = c.var.form;
  const keys = await resolveIssueKeys(c, values.blockedByIssueIds ?? "");
  if ("unknown" in keys)
    return showIssue(c, issueId, {
      blockers: {
        values,
        errors: { blockedByIssueIds: `No such issue in this company: ${keys.unknown.join(", ")}` },
      },
      status: 422,
    });
  const result = await c.var.api.send<UpdatedIssue>("PATCH", issueApiPath(issueId), {
    blockedByIssueIds: keys.ids,
  });
  if (!result.ok)
    return showIssue(c, issueId, {
      blockers: onField(failedForm(values, result, ["blockedByIssueIds"]), "blockedByIssueIds"),
      status: failureStatus(result),
    });
  const count = result.data.blockedByIssueIds.length;
  return redirectWithFlash(
    c,
    `/issues/${result.data.id}`,
    count === 0 ? "No blockers" : `Blocked by ${count} issue${count === 1 ? "" : "s"}`,
  );
});

issueModelPages.post("/issues/:issueId/questions", async (c) => {
  const issueId = c.req.param("issueId");
  const values = c.var.form;
  const result = await c.var.api.send<Question>("POST", `${issueApiPath(issueId)}/questions`, {
    body: values.question ?? "",
  });
  if (!result.ok)
    return showIssue(c, issueId, {
      ask: onField(failedForm(values, result, ["question"], { body: "question" }), "question"),
      status: failureStatus(result),
    });
  return redirectWithFlash(c, `/issues/${issueId}`, "Question asked");
});

issueModelPages.post("/issues/:issueId/questions/:questionId/answer", async (c) => {
  const { issueId, questionId } = c.req.param();
  const values = c.var.form;
  const result = await c.var.api.send<Question>(
    "POST",
    `${issueApiPath(issueId)}/questions/${encodeURIComponent(questionId)}/answer`,
    { answer: values.answer ?? "" },
  );
  if (!result.ok) {
    // Answered meanwhile (409) or gone (404): the question has no answer form any more to show it by.
    if (result.status === 409 || result.status === 404)
      return showIssue(c, issueId, { alert: result.error, status: result.status });
    return showIssue(c, issueId, {
      answer: { questionId, form: onField(failedForm(values, result, ["answer"]), "answer") },
      status: failureStatus(result),
    });
  }
  return redirectWithFlash(c, `/issues/${issueId}`, "Question answered");
});

/**
 * The browser's multipart body, passed on as the API's: no file chosen arrives as an empty, nameless
 * part, which is left out so the API says the file is required.
 */
issueModelPages.post("/issues/:issueId/attachments", async (c) => {
  const issueId = c.req.param("issueId");
  const body = await c.req.parseBody();
  const upload = new FormData();
  if (body.file instanceof File && !(body.file.name === "" && body.file.size === 0))
    upload.append("file", body.file, body.file.name);
  const result = await c.var.api.upload<Attachment>(`${issueApiPath(issueId)}/attachments`, upload);
  if (!result.ok)
    return showIssue(c, issueId, {
      attachment: onField(failedForm({}, result, ["file"]), "file"),
      status: failureStatus(result),
    });
  return redirectWithFlash(c, `/issues/${issueId}`, `Attached ${result.data.filename}`);
});

const PAGE_ERROR_STATUSES = new Set<number>([400, 401, 403, 404, 409, 422, 429, 503]);

/** The API's bytes and download headers, streamed; a refusal is the dashboard's error page. */
issueModelPages.get("/issues/:issueId/attachments/:attachmentId", async (c) => {
  const { issueId, attachmentId } = c.req.param();
  const response = await c.var.api.stream(
    `${issueApiPath(issueId)}/attachments/${encodeURIComponent(attachmentId)}/content`,
  );
  if (!response.ok) {
    const body = await response.json<{ error?: string }>().catch(() => ({ error: undefined }));
    const status = PAGE_ERROR_STATUSES.has(response.status) ? response.status : 500;
    throw new PageError(status as PageError["status"], body.error ?? "The download failed");
  }
  const headers = new Headers();
  for (const name of ["content-type", "content-length", "content-disposition", "x-content-type-options"]) {
    const value = response.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  return new Response(response.body, { status: 200, headers });
});

issueModelPages.post("/issues/:issueId/cancel", async (c) => {
  const issueId = c.req.param("issueId");
  const result = await c.var.api.send<UpdatedIssue>("PATCH", issueApiPath(issueId), {
    status: "cancelled",
  });
  if (!result.ok) return showIssue(c, issueId, { alert: result.error, status: failureStatus(result) });
  const back =
    c.var.form.back === "board" ? `/companies/${result.data.companyId}/issues` : `/issues/${result.data.id}`;
  return redirectWithFlash(c, back, `Issue ${result.data.identifier} cancelled`);
});
