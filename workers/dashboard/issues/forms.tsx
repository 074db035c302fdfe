import { blankForm, Field, Form, type FormState, TextAreaField } from "../ui/components";

/**
 * The issue page's own forms: the comment box under the timeline and a document's first revision
 * (what they post is in page.tsx). The status is changed in the properties panel (properties.tsx).
 */
export interface IssueFormStates {
  comment?: FormState;
  document?: FormState;
}

const action = (issue: { id: string }, what: string) => `/issues/${issue.id}/${what}`;

export function CommentForm({
  issue,
  csrf,
  form,
}: {
  issue: { id: string };
  csrf: string;
  form?: FormState;
}) {
  const comment = form ?? blankForm();
  return (
    <section class="comment-box" aria-labelledby="issue-comment">
      <h2 id="issue-comment" class="sr-only">
        Comment
      </h2>
      <Form action={action(issue, "comments")} csrf={csrf} form={comment} label="Comment">
        <TextAreaField
          form={comment}
          name="body"
          label="Comment"
          rows={3}
          hint="@Name wakes that agent, or notifies that person."
        />
        <div>
          <button type="submit">Add comment</button>
        </div>
      </Form>
    </section>
  );
}

/** Folded: adding a document is rarer than reading the ones there. Open when a failed submit returns. */
export function DocumentForm({
  issue,
  csrf,
  form,
}: {
  issue: { id: string };
  csrf: string;
  form?: FormState;
}) {
  const document = form ?? blankForm();
  return (
    <details class="add-document" open={form !== undefined}>
      <summary>Add document</summary>
      <Form action={action(issue, "documents")} csrf={csrf} form={document} label="Add document">
        <Field form={document} name="key" label="Key" hint="a-z, 0-9, '.', '_' or '-', e.g. plan" required />
        <Field form={document} name="title" label="Document title (optional)" />
        <TextAreaField form={document} name="documentBody" label="Document text" rows={6} />
        <div>
          <button type="submit">Add document</button>
        </div>
      </Form>
    </details>
  );
}
