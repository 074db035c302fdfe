import { ISSUE_STATUSES } from "../../db/schema";
import { blankForm, Field, Form, type FormState, SelectField, TextAreaField } from "../ui/components";

/** The issue page's own forms (comment, status, first document revision); what they post is in page.tsx. */
export interface IssueFormStates {
  comment?: FormState;
  update?: FormState;
  document?: FormState;
}

export function IssueForms({
  issue,
  csrf,
  view,
}: {
  issue: { id: string };
  csrf: string;
  view: IssueFormStates;
}) {
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
          <TextAreaField
            form={update}
            name="comment"
            label="Note with the change (optional)"
            rows={3}
            hint="Marking blocked? Say what it waits for here, unless a blocker, approval or question already does."
          />
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
