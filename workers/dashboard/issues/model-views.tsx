import type { Context } from "hono";
import type { z } from "zod";
import type { AttachmentSchema, IssueDetailSchema } from "../../control/issues";
import { authorLabel, Byline } from "../ui/board-shared";
import {
  ActionButton,
  type ActionRefusal,
  blankForm,
  DataTable,
  DeleteButton,
  EmptyState,
  errorId,
  Field,
  Form,
  type FormState,
  LiveRegion,
  StatusBadge,
  TextAreaField,
  Time,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";

// ---------------------------------------------------------------------------------------------
// The issue model on the issue page: blockers, questions, attachments and the Cancel action. Lists
// for everyone; the forms only for members and owners (viewers' writes are refused by the API).
// ---------------------------------------------------------------------------------------------

type IssueDetail = z.infer<typeof IssueDetailSchema>;
export type Attachment = z.infer<typeof AttachmentSchema>;
type PageContext = Context<DashboardEnv>;
type Names = ReadonlyMap<string, string>;

/** GET /issues/{id}/questions (../control/issues/routes/questions.ts QuestionSchema), the part shown. */
export interface Question {
  id: string;
  body: string;
  askedByAgentId: string | null;
  askedByUserId: string | null;
  askedByName?: string | null;
  status: "pending" | "answered";
  answer: string | null;
  answeredByAgentId: string | null;
  answeredByUserId: string | null;
  answeredByName?: string | null;
  answeredAt: string | null;
  answeredVia?: "whatsapp" | null;
  createdAt: string;
}

/** A blocking issue as the page links it; `null` fields when it can no longer be read. */
export interface Blocker {
  id: string;
  identifier: string | null;
  title: string | null;
  status: string | null;
}

/** The failed form of one of this module's forms, re-rendered by the issue page. */
export interface ModelForms {
  blockers?: FormState;
  ask?: FormState;
  answer?: { questionId: string; form: FormState };
  attachment?: FormState;
}

export const issueApiPath = (issueId: string) => `/api/issues/${encodeURIComponent(issueId)}`;
/** The issue's live socket: every region of its page that shows the issue's state refreshes from it. */
export const issueFeedPath = (issueId: string) => `${issueApiPath(issueId)}/events`;
const TERMINAL = new Set(["done", "cancelled"]);
export const isCancellable = (status: string) => !TERMINAL.has(status);

/** Issue numbers in identifiers compare as numbers (ACM-2 before ACM-10). */
const byIdentifier = (a: Blocker, b: Blocker) =>
  (a.identifier ?? a.id).localeCompare(b.identifier ?? b.id, "en", { numeric: true });

/**
 * Each blocker read through the API (so a blocker the viewer may not see shows as its id only), in
 * identifier order: links made together share a timestamp, so the stored order says nothing.
 */
export async function blockersOf(c: PageContext, issue: IssueDetail): Promise<Blocker[]> {
  const blockers = await Promise.all(
    issue.blockedByIssueIds.map(async (id): Promise<Blocker> => {
      const read = await c.var.api.read<IssueDetail>(issueApiPath(id));
      return read.ok
        ? { id, identifier: read.data.identifier, title: read.data.title, status: read.data.status }
        : { id, identifier: null, title: null, status: null };
    }),
  );
  return blockers.sort(byIdentifier);
}

/** Bytes as people read them. */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function BlockerList({ blockers }: { blockers: Blocker[] }) {
  if (blockers.length === 0) return <EmptyState>This issue waits for no other issue.</EmptyState>;
  return (
    <ul class="blockers">
      {blockers.map((blocker) => (
        <li>
          <a href={`/issues/${blocker.id}`}>{blocker.identifier ?? blocker.id}</a>{" "}
          {blocker.title ?? <span class="muted">(not visible to you)</span>}{" "}
          {blocker.status && <StatusBadge status={blocker.status} />}
        </li>
      ))}
    </ul>
  );
}

export function BlockersSection(props: {
  issue: IssueDetail;
  blockers: Blocker[];
  csrf: string;
  form: FormState | undefined;
  editable: boolean;
}) {
  const current = props.blockers.map((blocker) => blocker.identifier ?? blocker.id).join(", ");
  const form = props.form ?? blankForm({ blockedByIssueIds: current });
  return (
    <section class="panel" aria-labelledby="issue-blockers">
      <h2 id="issue-blockers">Blocked by</h2>
      <LiveRegion id="issue-blockers-live" feed={issueFeedPath(props.issue.id)}>
        <BlockerList blockers={props.blockers} />
      </LiveRegion>
      {props.editable && (
        <Form action={`/issues/${props.issue.id}/blockers`} csrf={props.csrf} form={form} label="Blockers">
          <Field
            form={form}
            name="blockedByIssueIds"
            label="Blocking issues"
            hint="Identifiers such as ACM-3, separated by commas or spaces; empty for none"
          />
          <div>
            <button type="submit">Save blockers</button>
          </div>
        </Form>
      )}
    </section>
  );
}

/** The answer has an id per question: several answer forms share the page. */
function AnswerForm(props: { issueId: string; question: Question; csrf: string; form: FormState }) {
  const name = `answer-${props.question.id}`;
  const error = props.form.errors.answer;
  return (
    <Form
      action={`/issues/${props.issueId}/questions/${props.question.id}/answer`}
      csrf={props.csrf}
      form={props.form}
      label="Answer the question"
    >
      <div class="field">
        <label for={`field-${name}`}>Answer</label>
        <textarea
          id={`field-${name}`}
          name="answer"
          rows={2}
          aria-invalid={error ? "true" : undefined}
          aria-describedby={error ? errorId(name) : undefined}
        >
          {props.form.values.answer ?? ""}
        </textarea>
        {error && (
          <p class="field-error" id={errorId(name)}>
            {error}
          </p>
        )}
      </div>
      <div>
        <button type="submit">Answer</button>
      </div>
    </Form>
  );
}

export function QuestionsSection(props: {
  issueId: string;
  questions: Question[];
  names: Names;
  viewerId: string;
  csrf: string;
  forms: ModelForms;
  editable: boolean;
}) {
  const { questions, names, viewerId } = props;
  const ask = props.forms.ask ?? blankForm();
  return (
    <section class="panel" aria-labelledby="issue-questions">
      <h2 id="issue-questions">Questions</h2>
      {/* Answer forms ride along: the script leaves a region alone while something typed in it is unsent. */}
      <LiveRegion id="issue-questions-live" feed={issueFeedPath(props.issueId)}>
        {questions.length === 0 && <EmptyState>No questions asked.</EmptyState>}
        <ol class="comments">
          {questions.map((question) => (
            <li class="card">
              <p class="muted">
                <StatusBadge status={question.status} />{" "}
                <Byline
                  label={authorLabel(
                    viewerId,
                    names,
                    question.askedByAgentId,
                    question.askedByUserId,
                    question.askedByName,
                  )}
                />{" "}
                asked, <Time value={question.createdAt} />
              </p>
              <div class="prose">{question.body}</div>
              {question.status === "answered" ? (
                <p>
                  <strong>
                    <Byline
                      label={authorLabel(
                        viewerId,
                        names,
                        question.answeredByAgentId,
                        question.answeredByUserId,
                        question.answeredByName,
                      )}
                    />{" "}
                    answered
                    {question.answeredVia === "whatsapp" ? " via WhatsApp" : ""}:
                  </strong>{" "}
                  {question.answer}
                </p>
              ) : (
                props.editable && (
                  <AnswerForm
                    issueId={props.issueId}
                    question={question}
                    csrf={props.csrf}
                    form={
                      props.forms.answer?.questionId === question.id ? props.forms.answer.form : blankForm()
                    }
                  />
                )
              )}
            </li>
          ))}
        </ol>
      </LiveRegion>
      {props.editable && (
        <Form
          action={`/issues/${props.issueId}/questions`}
          csrf={props.csrf}
          form={ask}
          label="Ask a question"
        >
          <TextAreaField
            form={ask}
            name="question"
            label="Question"
            rows={2}
            hint="A pending question lets the issue be blocked; asking wakes the assignee."
          />
          <div>
            <button type="submit">Ask</button>
          </div>
        </Form>
      )}
    </section>
  );
}

export function AttachmentsSection(props: {
  issueId: string;
  attachments: Attachment[];
  viewerId: string;
  names: Names;
  csrf: string;
  form: FormState | undefined;
  editable: boolean;
}) {
  const form = props.form ?? blankForm();
  return (
    <section class="panel" aria-labelledby="issue-attachments">
      <h2 id="issue-attachments">Attachments</h2>
      <LiveRegion id="issue-attachments-live" feed={issueFeedPath(props.issueId)}>
        {props.attachments.length === 0 ? (
          <EmptyState>No files attached.</EmptyState>
        ) : (
          <DataTable headings={["File", "Type", "Size", "Added by", "Added"]}>
            {props.attachments.map((file) => (
              <tr>
                <td>
                  <a href={`/issues/${props.issueId}/attachments/${file.id}`}>{file.filename}</a>
                </td>
                <td>{file.contentType}</td>
                <td>{byteSize(file.byteSize)}</td>
                <td>
                  <Byline
                    label={authorLabel(
                      props.viewerId,
                      props.names,
                      file.createdByAgentId,
                      file.createdByUserId,
                      file.createdByName,
                    )}
                  />
                </td>
                <td>
                  <Time value={file.createdAt} />
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </LiveRegion>
      {props.editable && (
        <Form
          action={`/issues/${props.issueId}/attachments`}
          csrf={props.csrf}
          form={form}
          label="Attach a file"
          enctype="multipart/form-data"
        >
          <Field
            form={form}
            name="file"
            label="File"
            type="file"
            hint="Up to 10 MiB: PNG, JPEG, WebP, GIF, PDF, plain text, Markdown, CSV or JSON"
          />
          <div>
            <button type="submit">Attach</button>
          </div>
        </Form>
      )}
    </section>
  );
}

/** Cancel an issue that is not done or cancelled yet; `back` names the page to return to. */
export function CancelButton(props: {
  issue: { id: string; identifier: string };
  csrf: string;
  back?: "board";
}) {
  return (
    <ActionButton
      action={`/issues/${props.issue.id}/cancel`}
      csrf={props.csrf}
      label="Cancel"
      name={`Cancel ${props.issue.identifier}`}
      variant="danger"
      confirm={`Cancel ${props.issue.identifier}? Its assignee stops working on it.`}
      hidden={props.back ? { back: props.back } : {}}
    />
  );
}

/** Delete, as the API documents it (board members; viewers have no button and get its 403). */
export function DeleteIssueButton(props: {
  issue: { id: string; identifier: string };
  csrf: string;
  refusal: ActionRefusal | undefined;
}) {
  const { issue } = props;
  return (
    <DeleteButton
      action={`/issues/${issue.id}/delete`}
      csrf={props.csrf}
      what={issue.identifier}
      id={issue.id}
      confirm={`Delete ${issue.identifier} with its comments, documents and attachments? Its sub-issues move up to its parent. This cannot be undone; Cancel keeps the record.`}
      refusal={props.refusal}
    />
  );
}
