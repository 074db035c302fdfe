/** The session page's webhook pieces: the add form (its POST is in webhook-pages.tsx, here), the table, a new secret shown once. */
import { WEBHOOK_EVENTS } from "../../../durable-objects/messaging/context";
import type { WebhookSummary } from "../../gateway/sessions";
import { ALL_EVENTS } from "../../gateway/webhooks";
import {
  blankForm,
  CheckboxField,
  DataTable,
  EmptyState,
  errorId,
  Field,
  Form,
  type FormState,
} from "../ui/components";
import { checkboxValue, eventFieldName, sessionPath } from "./shared";

/**
 * Readable names for the events. They avoid the word "message" so the send form's "Message" field
 * stays the only one a reader (or a test) finds by that label; the event's own name is printed beside.
 */
const EVENT_LABELS: Record<(typeof WEBHOOK_EVENTS)[number], string> = {
  "message.received": "Received",
  "message.sent": "Sent",
  "message.status": "Delivery and read receipts",
  "message.edited": "Edited",
  "message.deleted": "Deleted",
  "poll.vote": "Poll votes",
  "call.received": "Incoming calls",
  "presence.update": "Contacts online and typing",
  "connection.update": "Connection changes",
  "group.update": "Group changes",
  "group.upsert": "Groups joined or created",
  "group.participant": "Group members joined or left",
  "contact.update": "Contact changes",
  "status.update": "Status posts",
  "chat.update": "Chats archived, pinned or muted",
  "message.starred": "Stars",
  "label.update": "Labels created, changed or removed",
  "label.association": "Labels put on chats or taken off",
  "account.limits": "WhatsApp's limits on the account",
};

const EVENT_CHOICES = [
  { event: ALL_EVENTS, label: "All events" },
  ...WEBHOOK_EVENTS.map((event) => ({ event, label: EVENT_LABELS[event] })),
];

const EVENTS_HINT_ID = "field-events-hint";

function EventChoices({ form }: { form: FormState }) {
  const error = form.errors.events;
  return (
    <fieldset class="choices" aria-describedby={error ? errorId("events") : EVENTS_HINT_ID}>
      <legend>Events</legend>
      <span class="hint muted" id={EVENTS_HINT_ID}>
        What to send to this URL. "All events" includes the ones added later.
      </span>
      <ul>
        {EVENT_CHOICES.map(({ event, label }) => {
          const id = event === ALL_EVENTS ? "event-all" : `event-${event.replace(/[^\w-]/g, "-")}`;
          return (
            <li>
              <input
                type="checkbox"
                id={id}
                name={eventFieldName(event)}
                value="on"
                checked={checkboxValue(form.values[eventFieldName(event)]) === true}
                aria-describedby={`${id}-name`}
              />{" "}
              <label for={id}>{label}</label>{" "}
              <code class="muted" id={`${id}-name`}>
                {event}
              </code>
            </li>
          );
        })}
      </ul>
      {error && (
        <p class="field-error" id={errorId("events")}>
          {error}
        </p>
      )}
    </fieldset>
  );
}

/** Prefilled so that a URL alone makes a working webhook; the API still checks every field. */
export const newWebhookForm = () => blankForm({ name: "Webhook", [eventFieldName(ALL_EVENTS)]: "on" });

export function AddWebhookForm({ slug, csrf, form }: { slug: string; csrf: string; form: FormState }) {
  return (
    <Form action={`${sessionPath(slug)}/webhooks`} csrf={csrf} form={form}>
      <Field
        form={form}
        name="url"
        label="Webhook URL"
        type="url"
        placeholder="https://example.com/hooks/whatsapp"
        required
      />
      <Field form={form} name="name" label="Webhook name" required />
      <EventChoices form={form} />
      <Field
        form={form}
        name="secret"
        label="Signing secret (optional)"
        type="password"
        autocomplete="new-password"
        hint="At least 8 characters. Leave empty and one is generated and shown once."
      />
      <CheckboxField form={form} name="global" label="Global: send events from every session of the owner" />
      <div>
        <button type="submit">Add webhook</button>
      </div>
    </Form>
  );
}

export function WebhookTable({ slug, webhooks }: { slug: string; webhooks: WebhookSummary[] }) {
  if (webhooks.length === 0) return <EmptyState>No webhooks yet.</EmptyState>;
  return (
    <DataTable headings={["URL", "Name", "Events", "Active"]}>
      {webhooks.map((hook) => (
        <tr>
          <td>
            <a href={`${sessionPath(slug)}/webhooks/${encodeURIComponent(hook.id)}`}>{hook.url}</a>
          </td>
          <td>{hook.name}</td>
          <td>{hook.events.join(", ")}</td>
          <td>{hook.isActive ? "Yes" : "No"}</td>
        </tr>
      ))}
    </DataTable>
  );
}

/** A secret the API generated: in this response only, never in a URL or cookie. */
export function NewSecret({ secret }: { secret: { url: string; value: string } }) {
  return (
    <section class="panel" aria-labelledby="new-secret-heading">
      <h2 id="new-secret-heading">Signing secret</h2>
      <p>
        Deliveries to <span class="secret">{secret.url}</span> are signed with this secret. Copy it now: it is
        not shown again.
      </p>
      <div class="field">
        <label for="webhook-secret">New signing secret</label>
        <div class="copy-row">
          <input id="webhook-secret" class="secret" readonly value={secret.value} />
          <button type="button" class="secondary" data-copy="webhook-secret">
            Copy
          </button>
        </div>
      </div>
    </section>
  );
}
