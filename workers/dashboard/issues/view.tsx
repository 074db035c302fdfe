import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { CommentSchema, IssueDetailSchema } from "../../control/issues";
import { RunEntry, runsOf } from "../runs/view";
import {
  ActionAlert,
  type Agent,
  Avatar,
  actorLabel,
  agentNamesOf,
  companyNav,
  loadAgents,
  loadCompany,
  PriorityBadge,
} from "../ui/board-shared";
import { type ActionRefusal, EmptyState, LiveRegion, StatusBadge, Time } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { loadMyRole, mayChange, READ_ONLY_NOTE } from "../ui/member-shared";
import { render } from "../ui/render";
import { assigneeOptions, type QuickEditChoices, QuickEditForm } from "./board-card";
import { type IssueFormStates, IssueForms } from "./forms";
import {
  type Attachment,
  AttachmentsSection,
  BlockersSection,
  blockersOf,
  CancelButton,
  DeleteIssueButton,
  isCancellable,
  issueApiPath,
  issueFeedPath,
  type ModelForms,
  type Question,
  QuestionsSection,
} from "./model-views";

/** The issue page: what it shows and, for members, the forms; page.tsx and model-pages.tsx post to it. */

export type IssueDetail = z.infer<typeof IssueDetailSchema>;
type Comment = z.infer<typeof CommentSchema>;
type IssueContext = Context<DashboardEnv>;
/** The fields of GET …/documents/{key} this page shows (../control/issues/routes/documents.ts DocumentSchema). */
export interface IssueDocument {
  key: string;
  title: string | null;
  format: string;
  body: string;
  latestRevisionNumber: number;
  updatedAt: string;
}

/** A failed submit of one of the page's forms, or a refused one-button action, and its status. */
export interface IssueView extends IssueFormStates, ModelForms {
  alert?: string;
  /** A refused Delete, next to its button. */
  refusal?: ActionRefusal;
  status?: ContentfulStatusCode;
}

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
          : actorLabel(viewerId, names, { type: "user", id: comment.authorUserId, name: comment.authorName });
        return (
          <li class="card">
            <p class="muted">
              <Avatar name={author} /> {author}, <Time value={comment.createdAt} />
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

/** The properties panel's choices: agents and people as assignees, the company's labels. */
async function quickEditChoices(
  c: IssueContext,
  companyId: string,
  agents: Agent[],
  csrf: string,
): Promise<QuickEditChoices> {
  const base = `/api/companies/${encodeURIComponent(companyId)}`;
  const [members, labels] = await Promise.all([
    c.var.api.get<{ members: Array<{ userId: string; name: string }> }>(`${base}/members`),
    c.var.api.get<Array<{ id: string; name: string }>>(`${base}/labels`),
  ]);
  return { csrf, assignees: assigneeOptions(agents, members.members, "Unassigned"), labels };
}

export async function showIssue(c: IssueContext, issueId: string, view: IssueView = {}) {
  const issue = await c.var.api.get<IssueDetail>(issueApiPath(issueId));
  const path = issueApiPath(issue.id);
  const [company, agents, comments, documents, runs, role, questions, attachments, blockers] =
    await Promise.all([
      loadCompany(c, issue.companyId),
      loadAgents(c, issue.companyId),
      c.var.api.get<Comment[]>(`${path}/comments?limit=500`),
      documentsOf(c, issue.id),
      runsOf(c, issue),
      loadMyRole(c, issue.companyId),
      c.var.api.get<Question[]>(`${path}/questions`),
      c.var.api.get<Attachment[]>(`${path}/attachments`),
      blockersOf(c, issue),
    ]);
  const names = agentNamesOf(agents satisfies Agent[]);
  const editable = mayChange(role);
  const csrf = c.var.csrf;
  const choices = editable ? await quickEditChoices(c, issue.companyId, agents, csrf) : undefined;
  return render(
    c,
    {
      title: `${issue.identifier} ${issue.title}`,
      section: "companies",
      company: companyNav(company, "issues"),
      children: (
        <>
          <ActionAlert message={view.alert} />
          <div class="actions">
            <a href={`/companies/${company.id}/issues`}>Back to the board</a>
            {editable && isCancellable(issue.status) && <CancelButton issue={issue} csrf={csrf} />}
            {editable && <DeleteIssueButton issue={issue} csrf={csrf} refusal={view.refusal} />}
          </div>
          {choices && (
            <aside class="panel" aria-labelledby="issue-properties">
              <h2 id="issue-properties">Properties</h2>
              <QuickEditForm issue={{ ...issue, labelIds: issue.labelIds }} choices={choices} back="issue" />
            </aside>
          )}
          <LiveRegion id="issue-live" feed={issueFeedPath(issue.id)}>
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
          </LiveRegion>
          <div class="grid">
            <BlockersSection
              issue={issue}
              blockers={blockers}
              csrf={csrf}
              form={view.blockers}
              editable={editable}
            />
            <AttachmentsSection
              issueId={issue.id}
              attachments={attachments}
              csrf={csrf}
              form={view.attachment}
              editable={editable}
            />
          </div>
          <QuestionsSection
            issueId={issue.id}
            questions={questions}
            names={names}
            viewerId={c.var.viewer.id}
            csrf={csrf}
            forms={view}
            editable={editable}
          />
          {editable ? (
            <IssueForms issue={issue} csrf={csrf} view={view} />
          ) : (
            <p class="muted">{READ_ONLY_NOTE}</p>
          )}
        </>
      ),
    },
    view.status ?? 200,
  );
}
