import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import { type CommentSchema, type IssueDetailSchema, markOpened } from "../../control/issues";
import { database } from "../../db/client";
import { runsOf } from "../runs/view";
import {
  ActionAlert,
  type Agent,
  agentNamesOf,
  authorLabel,
  Byline,
  companyNav,
  loadAgents,
  loadCompany,
} from "../ui/board-shared";
import { type ActionRefusal, EmptyState, LiveRegion, StatusBadge, Time } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { loadMyRole, mayChange, READ_ONLY_NOTE } from "../ui/member-shared";
import { render } from "../ui/render";
import { CommentForm, DocumentForm, type IssueFormStates } from "./forms";
import {
  type Attachment,
  AttachmentsSection,
  BlockersSection,
  blockersOf,
  issueApiPath,
  issueFeedPath,
  type ModelForms,
  type Question,
  QuestionsSection,
} from "./model-views";
import { ActionsMenu, PropertiesPanel, propertyNamesOf, quickEditChoicesOf } from "./properties";
import { activityOf, Timeline, timelineOf } from "./timeline";

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
  createdByAgentId: string | null;
  createdByUserId: string | null;
  createdByName: string | null;
  updatedAt: string;
}

/** A failed submit of one of the page's forms, or a refused one-button action, and its status. */
export interface IssueView extends IssueFormStates, ModelForms {
  alert?: string;
  /** A refused Delete, next to its button. */
  refusal?: ActionRefusal;
  /** The note typed in the properties panel before the API refused the change. */
  note?: string;
  status?: ContentfulStatusCode;
}

async function documentsOf(c: IssueContext, issueId: string): Promise<IssueDocument[]> {
  const base = `${issueApiPath(issueId)}/documents`;
  const summaries = await c.var.api.get<Array<{ key: string }>>(base);
  return Promise.all(
    summaries.map((doc) => c.var.api.get<IssueDocument>(`${base}/${encodeURIComponent(doc.key)}`)),
  );
}

function Documents(props: {
  documents: IssueDocument[];
  viewerId: string;
  names: ReadonlyMap<string, string>;
}) {
  const { documents, viewerId, names } = props;
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
            <Byline
              label={authorLabel(
                viewerId,
                names,
                doc.createdByAgentId,
                doc.createdByUserId,
                doc.createdByName,
              )}
            />{" "}
            wrote it; updated <Time value={doc.updatedAt} />
          </p>
          <pre>{doc.body}</pre>
        </article>
      ))}
    </>
  );
}

/** The issue's status under its title (kept current by the timeline's live feed) and when it was opened. */
function Opened({ issue }: { issue: IssueDetail }) {
  return (
    <p class="issue-meta">
      <span id="issue-status">
        <StatusBadge status={issue.status} />
      </span>{" "}
      <span class="muted">
        {issue.identifier}, opened <Time value={issue.createdAt} />
      </span>
    </p>
  );
}

/** Everything the page shows, read through the API in parallel. */
async function issueData(c: IssueContext, issue: IssueDetail) {
  const path = issueApiPath(issue.id);
  const [company, agents, comments, documents, runs, role, questions, attachments, blockers, activity] =
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
      activityOf(c, issue),
    ]);
  const properties = await propertyNamesOf(c, issue.companyId, agents);
  return {
    company,
    agents,
    comments,
    documents,
    runs,
    role,
    questions,
    attachments,
    blockers,
    activity,
    properties,
  };
}

/**
 * Two columns: the main one reads top to bottom (status, description, one timeline of what happened,
 * was said and was run, the comment box, questions); the side one holds what describes the issue
 * (properties, blockers, attachments, documents) and the Actions menu.
 */
export async function showIssue(c: IssueContext, issueId: string, view: IssueView = {}) {
  const issue = await c.var.api.get<IssueDetail>(issueApiPath(issueId));
  // Opening the page reads it (the Mine inbox's Unread clears); a form shown again is not an open.
  if (view.status === undefined)
    c.executionCtx.waitUntil(
      markOpened(
        database(c.env.DB),
        { issueId: issue.id, companyId: issue.companyId, userId: c.var.viewer.id },
        Date.now(),
      ),
    );
  const data = await issueData(c, issue);
  const { company, agents, activity } = data;
  const names = agentNamesOf(agents satisfies Agent[]);
  const editable = mayChange(data.role);
  const csrf = c.var.csrf;
  const viewerId = c.var.viewer.id;
  const entries = timelineOf({ activity: activity.entries, comments: data.comments, runs: data.runs });
  const feed = issueFeedPath(issue.id);
  return render(
    c,
    {
      title: `${issue.identifier} ${issue.title}`,
      section: "companies",
      company: companyNav(company, "issues"),
      children: (
        <>
          <ActionAlert message={view.alert} />
          <p>
            <a href={`/companies/${company.id}/issues`}>Back to the board</a>
          </p>
          <div class="issue-layout">
            <div class="issue-main">
              <LiveRegion id="issue-live" feed={feed}>
                <Opened issue={issue} />
                {issue.description && <div class="panel prose">{issue.description}</div>}
                <section aria-labelledby="issue-timeline">
                  <h2 id="issue-timeline">Activity</h2>
                  <Timeline
                    entries={entries}
                    viewerId={viewerId}
                    names={names}
                    olderAt={
                      activity.complete ? undefined : `/companies/${company.id}/activity?entityType=issue`
                    }
                  />
                </section>
              </LiveRegion>
              {editable ? (
                <CommentForm issue={issue} csrf={csrf} form={view.comment} />
              ) : (
                <p class="muted">{READ_ONLY_NOTE}</p>
              )}
              <QuestionsSection
                issueId={issue.id}
                questions={data.questions}
                names={names}
                viewerId={viewerId}
                csrf={csrf}
                forms={view}
                editable={editable}
              />
            </div>
            <div class="issue-side">
              <PropertiesPanel
                issue={issue}
                names={data.properties}
                choices={editable ? quickEditChoicesOf(agents, data.properties, csrf) : undefined}
                note={view.note}
              />
              <BlockersSection
                issue={issue}
                blockers={data.blockers}
                csrf={csrf}
                form={view.blockers}
                editable={editable}
              />
              <AttachmentsSection
                issueId={issue.id}
                attachments={data.attachments}
                viewerId={viewerId}
                names={names}
                csrf={csrf}
                form={view.attachment}
                editable={editable}
              />
              <section class="panel" aria-labelledby="issue-documents">
                <h2 id="issue-documents">Documents</h2>
                <LiveRegion id="issue-documents-live" feed={feed}>
                  <Documents documents={data.documents} viewerId={viewerId} names={names} />
                </LiveRegion>
                {editable && <DocumentForm issue={issue} csrf={csrf} form={view.document} />}
              </section>
              {editable && <ActionsMenu issue={issue} csrf={csrf} refusal={view.refusal} />}
            </div>
          </div>
        </>
      ),
    },
    view.status ?? 200,
  );
}
