import type { z } from "zod";
import type { ScopedKeySchema } from "../../auth/scoped-key-schemas";
import { KEY_SCOPES } from "../../core/scopes";
import {
  ActionButton,
  CheckboxField,
  DataTable,
  EmptyState,
  Field,
  Form,
  type FormState,
  SelectField,
  Time,
} from "../ui/components";

export type ScopedKey = z.infer<typeof ScopedKeySchema>;
export const SCOPED_KEYS_PATH = "/api/user/keys";

/** Where a new key may be limited: the caller's sessions and companies, as the create form lists them. */
export interface KeyLimits {
  sessions: ReadonlyArray<{ sessionId: string; name: string }>;
  companies: ReadonlyArray<{ id: string; name: string }>;
}

export const SCOPE_HINTS: Record<(typeof KEY_SCOPES)[number], string> = {
  read: "read anything it reaches",
  send: "send WhatsApp messages",
  control: "change issues, comments, approvals, documents",
  admin: "everything, including sessions, keys, members, webhooks, settings",
};

function limitOf(key: ScopedKey): string {
  if (key.sessionId) return `session ${key.sessionId}`;
  if (key.companyId) return `company ${key.companyId}`;
  return "none";
}

/** The create form's fields as the API's body: scopes from the ticked boxes, a limit, days to expiry. */
export function scopedKeyBody(form: Record<string, string>, now = Date.now()) {
  const [kind, id] = (form.limit ?? "").split(":", 2);
  const days = Number(form.expiresInDays ?? "");
  return {
    name: form.name ?? "",
    scopes: KEY_SCOPES.filter((scope) => form[`scope_${scope}`] === "on"),
    ...(kind === "session" && id ? { sessionId: id } : {}),
    ...(kind === "company" && id ? { companyId: id } : {}),
    ...(form.expiresInDays && Number.isFinite(days) && days > 0
      ? { expiresAt: new Date(now + days * 86_400_000).toISOString() }
      : {}),
  };
}

/** The user's scoped keys (issue 27): listed, revoked one by one, and a form that creates one. */
export function ScopedKeysPanel(props: {
  keys: ScopedKey[];
  limits: KeyLimits;
  csrf: string;
  form: FormState;
}) {
  const limitOptions = [
    { value: "", label: "No limit" },
    ...props.limits.sessions.map((s) => ({ value: `session:${s.sessionId}`, label: `Session: ${s.name}` })),
    ...props.limits.companies.map((c) => ({ value: `company:${c.id}`, label: `Company: ${c.name}` })),
  ];
  return (
    <section class="panel" aria-labelledby="scoped-keys-heading">
      <h2 id="scoped-keys-heading">Scoped keys</h2>
      <p class="muted">
        Keys for a script or an MCP client that may do less than you: only some scopes, one WhatsApp session
        or one company, until a date. A request outside them answers 403.
      </p>
      {props.keys.length === 0 ? (
        <EmptyState>No scoped keys.</EmptyState>
      ) : (
        <DataTable headings={["Name", "Scopes", "Limited to", "Expires", "Last used", ""]}>
          {props.keys.map((key) => (
            <tr>
              <td>
                {key.name} <code>{`${key.keyPrefix}…${key.last4}`}</code>
              </td>
              <td>{key.scopes.join(", ")}</td>
              <td>{limitOf(key)}</td>
              <td>
                {key.expiresAt ? <Time value={key.expiresAt} /> : "never"}
                {key.expired ? " (expired)" : ""}
              </td>
              <td>{key.lastUsedAt ? <Time value={key.lastUsedAt} /> : "never"}</td>
              <td>
                <ActionButton
                  action={`/api-key/scoped/${encodeURIComponent(key.id)}/revoke`}
                  csrf={props.csrf}
                  label={`Revoke ${key.name}`}
                  variant="danger"
                  confirm={`Revoke the key ${key.name}? Everything that uses it stops working.`}
                />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <Form action="/api-key/scoped" csrf={props.csrf} form={props.form} label="New scoped key">
        <Field form={props.form} name="name" label="Name" required />
        {KEY_SCOPES.map((scope) => (
          <CheckboxField
            form={props.form}
            name={`scope_${scope}`}
            label={`${scope}: ${SCOPE_HINTS[scope]}`}
          />
        ))}
        <SelectField form={props.form} name="limit" label="Limited to" options={limitOptions} />
        <Field
          form={props.form}
          name="expiresInDays"
          label="Expires in (days, empty for never)"
          type="number"
          min="1"
        />
        <button type="submit">Create scoped key</button>
      </Form>
    </section>
  );
}
