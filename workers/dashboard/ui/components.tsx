import type { Child } from "hono/jsx";
import type { FieldErrors } from "./api-client";

/**
 * What a form shows: the values to put back and the server's messages per field. A failed submit
 * re-renders the page with both, so nothing typed is lost and each message sits next to its field.
 */
export interface FormState {
  values: Record<string, string>;
  errors: FieldErrors;
}

export const blankForm = (values: Record<string, string> = {}): FormState => ({ values, errors: {} });

const fieldId = (name: string) => `field-${name.replace(/[^\w-]/g, "-")}`;
export const errorId = (name: string) => `${fieldId(name)}-error`;

export function FieldError({ name, message }: { name: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <p class="field-error" id={errorId(name)}>
      {message}
    </p>
  );
}

/** The accessible wiring of an input: its id, and the error it is described by when there is one. */
function inputAttributes(form: FormState, name: string, hintId?: string) {
  const error = form.errors[name];
  const describedBy = [error ? errorId(name) : null, hintId ?? null].filter(Boolean).join(" ");
  return {
    id: fieldId(name),
    name,
    "aria-invalid": error ? ("true" as const) : undefined,
    "aria-describedby": describedBy || undefined,
  };
}

interface FieldProps {
  form: FormState;
  name: string;
  label: string;
  hint?: string;
  required?: boolean;
}

/** Label, optional hint and the field's error around one control: the part every field shares. */
function FieldFrame(props: FieldProps & { hintId?: string; children?: Child }) {
  return (
    <div class="field">
      <label for={fieldId(props.name)}>{props.label}</label>
      {props.hint && (
        <span class="hint" id={props.hintId}>
          {props.hint}
        </span>
      )}
      {props.children}
      <FieldError name={props.name} message={props.form.errors[props.name]} />
    </div>
  );
}

const hintIdOf = (props: FieldProps) => (props.hint ? `${fieldId(props.name)}-hint` : undefined);

export function Field(
  props: FieldProps & {
    type?:
      | "text"
      | "email"
      | "password"
      | "url"
      | "number"
      | "tel"
      | "datetime-local"
      | "date"
      | "search"
      | "file";
    autocomplete?: string;
    placeholder?: string;
    min?: string;
    step?: string;
    accept?: string;
  },
) {
  const hintId = hintIdOf(props);
  return (
    <FieldFrame {...props} hintId={hintId}>
      <input
        {...inputAttributes(props.form, props.name, hintId)}
        type={props.type ?? "text"}
        value={
          props.type === "password" || props.type === "file"
            ? undefined
            : (props.form.values[props.name] ?? "")
        }
        required={props.required}
        autocomplete={props.autocomplete}
        placeholder={props.placeholder}
        min={props.min}
        step={props.step}
        accept={props.accept}
      />
    </FieldFrame>
  );
}

export function TextAreaField(props: FieldProps & { rows?: number }) {
  const hintId = hintIdOf(props);
  return (
    <FieldFrame {...props} hintId={hintId}>
      <textarea
        {...inputAttributes(props.form, props.name, hintId)}
        required={props.required}
        rows={props.rows}
      >
        {props.form.values[props.name] ?? ""}
      </textarea>
    </FieldFrame>
  );
}

export interface Option {
  value: string;
  label: string;
}

export function SelectField(props: FieldProps & { options: readonly Option[] }) {
  const hintId = hintIdOf(props);
  const current = props.form.values[props.name] ?? "";
  return (
    <FieldFrame {...props} hintId={hintId}>
      <select {...inputAttributes(props.form, props.name, hintId)} required={props.required}>
        {props.options.map((option) => (
          <option value={option.value} selected={option.value === current}>
            {option.label}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}

export function CheckboxField(props: Omit<FieldProps, "required">) {
  const checked = ["on", "true", "1"].includes(props.form.values[props.name] ?? "");
  return (
    <div class="field">
      <label>
        <input {...inputAttributes(props.form, props.name)} type="checkbox" value="on" checked={checked} />{" "}
        {props.label}
      </label>
      {props.hint && <span class="hint">{props.hint}</span>}
      <FieldError name={props.name} message={props.form.errors[props.name]} />
    </div>
  );
}

/**
 * A POST form with the CSRF token. A message that belongs to no field (`_form`) is shown at its top
 * as an alert, so screen readers announce it after the failed submit.
 */
export function Form(props: {
  action: string;
  csrf: string;
  form?: FormState;
  class?: string;
  label?: string;
  confirm?: string;
  /** multipart/form-data for a file upload. */
  enctype?: "multipart/form-data";
  children?: Child;
}) {
  const general = props.form?.errors._form;
  return (
    <form
      method="post"
      action={props.action}
      class={props.class ?? "stack"}
      aria-label={props.label}
      data-confirm={props.confirm}
      enctype={props.enctype}
      novalidate
    >
      <input type="hidden" name="_csrf" value={props.csrf} />
      {general && (
        <p class="alert" role="alert" id={errorId("_form")}>
          {general}
        </p>
      )}
      {props.children}
    </form>
  );
}

/**
 * The API's refusal of a one-button action, shown next to that button. `name` tells the buttons of a
 * page apart (`delete-<id>`); the message's id is `field-<name>-error`.
 */
export interface ActionRefusal {
  name: string;
  message: string;
}

/** The refusal if it belongs to the button called `name`. */
export const refusalNamed = (refusal: ActionRefusal | undefined, name: string) =>
  refusal?.name === name ? refusal : undefined;

/** A one-button form (start, stop, approve, redeliver). */
export function ActionButton(props: {
  action: string;
  csrf: string;
  label: string;
  /** The name a screen reader says, when the visible label needs its context ("Cancel ACM-3"). */
  name?: string;
  variant?: "secondary" | "danger";
  confirm?: string;
  hidden?: Record<string, string>;
  /** The API's refusal of this action, shown next to its button. */
  error?: ActionRefusal;
}) {
  const error = props.error;
  return (
    <form method="post" action={props.action} class="inline" data-confirm={props.confirm}>
      <input type="hidden" name="_csrf" value={props.csrf} />
      {Object.entries(props.hidden ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button
        type="submit"
        class={props.variant}
        aria-label={props.name}
        aria-describedby={error ? errorId(error.name) : undefined}
      >
        {props.label}
      </button>
      {error && <FieldError name={error.name} message={error.message} />}
    </form>
  );
}

/** Delete, behind a confirm that says what happens; its refusal is named `delete-<id>`. */
export function DeleteButton(props: {
  action: string;
  csrf: string;
  /** Said by screen readers after "Delete": "ACM-3", "project Docs". */
  what: string;
  id: string;
  confirm: string;
  refusal: ActionRefusal | undefined;
}) {
  return (
    <ActionButton
      action={props.action}
      csrf={props.csrf}
      label="Delete"
      name={`Delete ${props.what}`}
      variant="danger"
      confirm={props.confirm}
      error={refusalNamed(props.refusal, `delete-${props.id}`)}
    />
  );
}

const TONES: Record<string, "ok" | "warn" | "danger" | "neutral"> = {
  Connected: "ok",
  connected: "ok",
  done: "ok",
  succeeded: "ok",
  approved: "ok",
  active: "ok",
  idle: "ok",
  running: "warn",
  in_progress: "warn",
  in_review: "warn",
  pending: "warn",
  queued: "warn",
  revision_requested: "warn",
  Connecting: "warn",
  paused: "warn",
  blocked: "danger",
  failed: "danger",
  rejected: "danger",
  terminated: "danger",
  cancelled: "neutral",
  Disconnected: "neutral",
};

/** A status word in a colour that carries no meaning on its own: the word is always printed. */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge ${TONES[status] ?? "neutral"}`}>{status.replace(/_/g, " ")}</span>;
}

export function EmptyState({ children }: { children?: Child }) {
  return <p class="muted">{children}</p>;
}

/** Dates as the reader's UTC timestamp; the ISO string stays machine-readable in `datetime`. */
export function Time({ value }: { value: string | number | null | undefined }) {
  if (value === null || value === undefined || value === "") return <span class="muted">—</span>;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return <span>{String(value)}</span>;
  const iso = date.toISOString();
  return <time datetime={iso}>{iso.replace("T", " ").slice(0, 16)} UTC</time>;
}

/** A horizontally scrollable table, one column per heading; `children` are the body's rows. */
export function DataTable({ headings, children }: { headings: readonly string[]; children?: Child }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {headings.map((heading) => (
              <th scope="col">{heading}</th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * A region the client script re-reads from the server when the live socket at `feed` announces a
 * change (assets/client.ts); only while that socket is down does it re-read every 30 s. Regions on one
 * feed share one socket.
 */
export function LiveRegion(props: { id: string; feed: string; class?: string; children?: Child }) {
  // data-live-drawn: a change made between reading what the region shows and the socket's hello
  // would otherwise never reach the page (the hello's seq already counts it).
  return (
    <div
      id={props.id}
      data-live="30"
      data-live-feed={props.feed}
      data-live-drawn={String(Date.now())}
      class={props.class}
    >
      {props.children}
    </div>
  );
}
