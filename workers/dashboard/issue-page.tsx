import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { CommentSchema, IssueDetailSchema, UpdatedIssueSchema } from "../control/issues";
import { ISSUE_STATUSES } from "../db/schema";
import {
  type Agent,
  actorLabel,
  agentNamesOf,
  companyNav,
  failedForm,
  loadAgents,
  loadCompany,
  optionalText,
} from "./board-shared";
import type { DashboardEnv } from "./env";
import { PriorityBadge } from "./issue-board-page";
import { loadMyRole, mayChange, READ_ONLY_NOTE } from "./member-shared";
import { failureStatus, redirectWithFlash, render } from "./render";
import { RunEntry, runsOf } from "./run-view";
import {
  blankForm,
  EmptyState,
  Field,
  Form,
  type FormState,
  SelectField,
  StatusBadge,
  TextAreaField,
  Time,
} from "./ui";

type IssueDetail = z.infer<typeof IssueDetailSchema>;
type Comment = z.infer<typeof CommentSchema>;
type IssueContext = Context<DashboardEnv>;
/** The fields of GET …/documents/{key} this page shows (../control/issues/routes/documents.ts DocumentSchema). */
interface IssueDocument {
  key: string;
  title: string | null;
  format: string;
  body: string;
  latestRevisionNumber: number;
  updatedAt: string;
}
export const issuePage = new Hono<DashboardEnv>();

const COMMENT_FIELDS = ["body"] as const;
const STATUS_FIELDS = ["status", "comment"] as const;
const DOCUMENT_FIELDS = ["key", "title", "documentBody"] as const;

interface IssueView {
  comment?: FormState;
  update?: FormState;
  document?: FormState;
  status?: ContentfulStatusCode;
}

const issueApiPath = (issueId: string) => `/api/issues/${encodeURIComponent(issueId)}`;

async function documentsOf(c: IssueContext, issueId: string): Promise<IssueDocument[]> {
  const base = `${issueApiPath(issueId)}/documents`;
  const summaries = await c.var.api.get<Array<{ key: string }>>(base);
  return Promise.all(
    summaries.map((doc) => c.var.api.get<IssueDocument>(`${base}/${encodeURIComponent(doc.key)}`)),
  );
}

function Facts({ issue, names }: { issue: IssueDetail; names: ReadonlyMap<string, string> }) {
  const assignee = issue.assigneeAgentId
    ? (names.get(issue.assigneeAgentId) ?? "An agent")
    : issue.assigneeUserId
      ? "A board member"
      : "Unassigned";
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <span id="issue-status">
          <StatusBadge status={issue.status} />
        </span>
      </dd>
      <dt>Assignee</dt>
      <dd>{assignee}</dd>
      <dt>Priority</dt>
      <dd>
        <PriorityBadge priority={issue.priority} />
      </dd>
      <dt>Project</dt>
      <dd>{issue.project?.name ?? "None"}</dd>
      <dt>Started</dt>
      <dd>
        <Time value={issue.startedAt} />
      </dd>
      <dt>Completed</dt>
      <dd>
        <Time value={issue.completedAt} />
      </dd>
    </dl>
  );
}

function Comments({
  comments,
  names,
  viewerId,
}: {
  comments: Comment[];
  names: ReadonlyMap<string, string>;
  viewerId: string;
}) {
  if (comments.length === 0) return <EmptyState>No comments yet.</EmptyState>;
  return (
    <ol class="comments">
      {comments.map((comment) => {
        const author = comment.authorAgentId
          ? actorLabel(viewerId, names, { type: "agent", id: comment.authorAgentId })
          : actorLabel(viewerId, names, { type: "user", id: comment.authorUserId });
        return (
          <li class="card">
            <p class="muted">
              {author}, <Time value={comment.createdAt} />
            </p>
            <div class="prose">{comment.body}</div>
          </li>
        );
      })}
    </ol>
  );
}

function Documents({ documents }: { documents: IssueDocument[] }) {
  if (documents.length === 0) return <EmptyState>No documents yet.</EmptyState>;
  return (
    <>
      {documents.map((doc) => (
        <article class="card">
          <h3>
            {doc.title ?? doc.key}{" "}
            <span class="muted">
              ({doc.key}, revision {doc.latestRevisionNumber})
            </span>
          </h3>
          <p class="muted">
            Updated <Time value={doc.updatedAt} />
          </p>
          <pre>{doc.body}</pre>
        </article>
      ))}
    </>
  );
}

function IssueForms({ issue, csrf, view }: { issue: IssueDetail; csrf: string; view: IssueView }) {
  // No status is preselected: the live region above moves on while this form stays as loaded, and a
  // preselected stale status would quietly move the issue back when only a note is sent.
  const update = view.update ?? blankForm();
  const comment = view.comment ?? blankForm();
  const document = view.document ?? blankForm();
  const action = (what: string) => `/issues/${issue.id}/${what}`;
  return (
    <div class="grid">
      <section class="panel" aria-labelledby="issue-comment">
        <h2 id="issue-comment">Comment</h2>
        <Form action={action("comments")} csrf={csrf} form={comment} label="Comment">
          <TextAreaField form={comment} name="body" label="Comment" rows={4} hint="@Name wakes that agent." />
          <div>
            <button type="submit">Add comment</button>
          </div>
        </Form>
      </section>
      <section class="panel" aria-labelledby="issue-update">
        <h2 id="issue-update">Change status</h2>
        <Form action={action("update")} csrf={csrf} form={update} label="Change status">
          <SelectField
            form={update}
            name="status"
            label="Status"
            options={[
              { value: "", label: "No change" },
              ...ISSUE_STATUSES.map((status) => ({ value: status, label: status.replace(/_/g, " ") })),
            ]}
          />
          <TextAreaField form={update} name="comment" label="Note with the change (optional)" rows={3} />
          <div>
            <button type="submit">Update issue</button>
          </div>
        </Form>
      </section>
      <section class="panel" aria-labelledby="issue-document">
        <h2 id="issue-document">Add document</h2>
        <Form action={action("documents")} csrf={csrf} form={document} label="Add document">
          <Field
            form={document}
            name="key"
            label="Key"
            hint="a-z, 0-9, '.', '_' or '-', e.g. plan"
            required
          />
          <Field form={document} name="title" label="Document title (optional)" />
          <TextAreaField form={document} name="documentBody" label="Document text" rows={6} />
          <div>
            <button type="submit">Add document</button>
          </div>
        </Form>
      </section>
    </div>
  );
}

async function showIssue(c: IssueContext, issueId: string, view: IssueView = {}) {
  const issue = await c.var.api.get<IssueDetail>(issueApiPath(issueId));
  const [company, agents, comments, documents, runs, role] = await Promise.all([
    loadCompany(c, issue.companyId),
    loadAgents(c, issue.companyId),
    c.var.api.get<Comment[]>(`${issueApiPath(issue.id)}/comments?limit=500`),
    documentsOf(c, issue.id),
    runsOf(c, issue),
    loadMyRole(c, issue.companyId),
  ]);
  const names = agentNamesOf(agents satisfies Agent[]);
  return render(
    c,
    {
      title: `${issue.identifier} ${issue.title}`,
      section: "companies",
      company: companyNav(company, "issues"),
      children: (
        <>
          <p>
            <a href={`/companies/${company.id}/issues`}>Back to the board</a>
          </p>
          <div id="issue-live" data-live="30" data-live-feed={`${issueApiPath(issue.id)}/events`}>
            <Facts issue={issue} names={names} />
            {issue.description && <div class="panel prose">{issue.description}</div>}
            <section aria-labelledby="issue-runs">
              <h2 id="issue-runs">Agent runs</h2>
              {runs.length === 0 ? (
                <EmptyState>No agent has worked on this issue yet.</EmptyState>
              ) : (
                runs.map(({ run, log, events }) => (
                  <RunEntry run={run} log={log} events={events} names={names} />
                ))
              )}
            </section>
            <section aria-labelledby="issue-comments">
              <h2 id="issue-comments">Comments</h2>
              <Comments comments={comments} names={names} viewerId={c.var.viewer.id} />
            </section>
            <section aria-labelledby="issue-documents">
              <h2 id="issue-documents">Documents</h2>
              <Documents documents={documents} />
            </section>
          </div>
          {mayChange(role) ? (
            <IssueForms issue={issue} csrf={c.var.csrf} view={view} />
          ) : (
            <p class="muted">{READ_ONLY_NOTE}</p>
          )}
        </>
      ),
    },
    view.status ?? 200,
  );
}

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

issuePage.post("/issues/:issueId/update", async (c) => {
  const issueId = c.req.param("issueId");
  const values = c.var.form;
  const result = await c.var.api.send<z.infer<typeof UpdatedIssueSchema>>("PATCH", issueApiPath(issueId), {
    status: optionalText(values.status),
    comment: optionalText(values.comment),
  });
  if (!result.ok) {
    const form = failedForm(values, result, STATUS_FIELDS);
    // A refused move (422 "Cannot move an issue from … to …") is about the chosen status.
    if (result.status === 422 && form.errors._form && !form.errors.status) {
      form.errors.status = form.errors._form;
      delete form.errors._form;
    }
    return showIssue(c, issueId, { update: form, status: failureStatus(result) });
  }
  return redirectWithFlash(c, `/issues/${result.data.id}`, `Issue ${result.data.identifier} updated`);
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
