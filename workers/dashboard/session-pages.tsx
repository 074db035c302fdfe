import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import { WEBHOOK_EVENTS } from "../../durable-objects/messaging/context";
import type { ACCESS_MODES } from "../db/schema";
import type {
  BotConfigSchema,
  MeResourceSchema,
  SessionDetailSchema,
  SessionSchema,
  SessionSettingsSchema,
  WebhookSummary,
} from "../gateway/session-schemas";
import { ALL_EVENTS } from "../gateway/webhooks-schemas";
import type { ApiResult, FieldErrors } from "./api-client";
import type { DashboardEnv, FormFields } from "./env";
import { failureStatus, redirectWithFlash, render } from "./render";
import {
  ActionButton,
  blankForm,
  CheckboxField,
  EmptyState,
  errorId,
  Field,
  Form,
  type FormState,
  SelectField,
  StatusBadge,
  TextAreaField,
  Time,
} from "./ui";

type Session = z.infer<typeof SessionSchema>;
type SessionDetail = z.infer<typeof SessionDetailSchema>;
type BotConfig = z.infer<typeof BotConfigSchema>;
type Settings = z.infer<typeof SessionSettingsSchema>;
type Me = z.infer<typeof MeResourceSchema>;
type Ctx = Context<DashboardEnv>;
type Failure = ApiResult<unknown> & { ok: false };

// ── Shared by the gateway pages (pairing-page.tsx, webhook-pages.tsx) ──────────────────────────

export const sessionPath = (slug: string) => `/sessions/${encodeURIComponent(slug)}`;
export const sessionApi = (slug: string) => `/api/sessions/${encodeURIComponent(slug)}`;

/** A submitted field, "" when the browser did not send it (an unchecked checkbox). */
export const fieldOf = (form: FormFields, name: string): string => form[name] ?? "";

/**
 * A checkbox (or a hidden "true"/"false") as the API's boolean. Anything else is passed on as it is,
 * so the API (not this page) says what is wrong with it.
 */
export function checkboxValue(value: string | undefined): boolean | string {
  if (value === undefined || ["", "false", "0"].includes(value)) return false;
  if (["on", "true", "1"].includes(value)) return true;
  return value;
}

/** The status a failed action re-renders with: the API's 4xx, or 503 when the session is not ready. */
export function pageStatus(result: Failure): ContentfulStatusCode {
  return result.status === 503 ? 503 : failureStatus(result);
}

/**
 * The API names fields by their place in its JSON body (`config.readReceipts`, `botAllowedJids.2`,
 * `jid`); the form names them by input. `rename` maps one to the other; the first message per field wins.
 */
export function renameErrors(errors: FieldErrors, rename: (apiPath: string) => string): FieldErrors {
  const renamed: FieldErrors = {};
  for (const [path, message] of Object.entries(errors)) {
    const name = rename(path.replace(/(\.\d+)+$/, ""));
    if (!(name in renamed)) renamed[name] = message;
  }
  return renamed;
}

/** "Ada (+15550001111)" from WhatsApp's `me`, as the pairing page's script prints it too. */
export function describeMe(me: Me): string {
  if (!me) return "";
  const phone = `+${String(me.id).split(/[:@]/)[0] ?? ""}`;
  return me.name ? `${me.name} (${phone})` : phone;
}

const phoneOf = (me: Me) => (me ? `+${String(me.id).split(/[:@]/)[0] ?? ""}` : "");

function formatUptime(seconds: number): string {
  if (seconds <= 0) return "—";
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  return hours > 0 ? `${hours} h ${minutes} min` : `${minutes} min ${seconds % 60} s`;
}

// ── Webhook form pieces (the form sits on the session page; webhook-pages.tsx handles its POST) ──

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
  "connection.update": "Connection changes",
  "group.update": "Group changes",
  "group.upsert": "Groups joined or created",
  "group.participant": "Group members joined or left",
  "contact.update": "Contact changes",
  "status.update": "Status posts",
};

const EVENT_CHOICES = [
  { event: ALL_EVENTS, label: "All events" },
  ...WEBHOOK_EVENTS.map((event) => ({ event, label: EVENT_LABELS[event] })),
];

/** Each event is its own checkbox name: the form parser keeps one value per name. */
const eventFieldName = (event: string) => `events:${event}`;

export function selectedEvents(form: FormFields): string[] {
  return Object.keys(form)
    .filter((name) => name.startsWith("events:") && checkboxValue(form[name]) === true)
    .map((name) => name.slice("events:".length));
}

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
const newWebhookForm = () => blankForm({ name: "Webhook", [eventFieldName(ALL_EVENTS)]: "on" });

function AddWebhookForm({ slug, csrf, form }: { slug: string; csrf: string; form: FormState }) {
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

function WebhookTable({ slug, webhooks }: { slug: string; webhooks: WebhookSummary[] }) {
  if (webhooks.length === 0) return <EmptyState>No webhooks yet.</EmptyState>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">Name</th>
            <th scope="col">Events</th>
            <th scope="col">Active</th>
          </tr>
        </thead>
        <tbody>
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
        </tbody>
      </table>
    </div>
  );
}

/** A secret the API generated: in this response only, never in a URL or cookie. */
function NewSecret({ secret }: { secret: { url: string; value: string } }) {
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

// ── Session list ─────────────────────────────────────────────────────────────────────────────

function SessionTable({ sessions }: { sessions: Session[] }) {
  if (sessions.length === 0) return <EmptyState>No sessions yet. Create one below.</EmptyState>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Session ID</th>
            <th scope="col">Status</th>
            <th scope="col">Phone</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((s) => (
            <tr>
              <td>
                <a href={sessionPath(s.sessionId)}>{s.name}</a>
              </td>
              <td>
                <code>{s.sessionId}</code>
              </td>
              <td>
                <StatusBadge status={s.status} /> <span class="muted">{s.state.replace(/_/g, " ")}</span>
              </td>
              <td>{phoneOf(s.me) || <span class="muted">—</span>}</td>
              <td>
                <Time value={s.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function NewSessionForm({ csrf, form }: { csrf: string; form: FormState }) {
  return (
    <Form action="/sessions" csrf={csrf} form={form}>
      <Field form={form} name="name" label="Name" required />
      <Field
        form={form}
        name="sessionId"
        label="Session ID (optional)"
        hint="Letters, digits, '-' or '_'; used in API paths. Generated when empty."
      />
      <div>
        <button type="submit">Create session</button>
      </div>
    </Form>
  );
}

async function showSessionList(c: Ctx, form: FormState, status: ContentfulStatusCode = 200) {
  const sessions = await c.var.api.get<Session[]>("/api/sessions");
  return render(
    c,
    {
      title: "Sessions",
      section: "sessions",
      children: (
        <>
          <div id="sessions-live" data-live="3">
            <SessionTable sessions={sessions} />
          </div>
          <section class="panel" aria-labelledby="new-session-heading">
            <h2 id="new-session-heading">New session</h2>
            <NewSessionForm csrf={c.var.csrf} form={form} />
          </section>
        </>
      ),
    },
    status,
  );
}

// ── Session detail ───────────────────────────────────────────────────────────────────────────

function SessionFacts({ session }: { session: SessionDetail }) {
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <StatusBadge status={session.status} />
      </dd>
      <dt>State</dt>
      <dd>{session.state.replace(/_/g, " ")}</dd>
      <dt>Phone</dt>
      <dd>{session.me ? describeMe(session.me) : <span class="muted">No phone linked</span>}</dd>
      <dt>Uptime</dt>
      <dd>{formatUptime(session.uptime)}</dd>
      <dt>Messages stored</dt>
      <dd>{session.messageCount}</dd>
      <dt>Bridge</dt>
      <dd>{session.hasInstance ? "Holds the session" : "None right now"}</dd>
      <dt>Last disconnect</dt>
      <dd>{session.lastDisconnect ?? <span class="muted">—</span>}</dd>
      <dt>Created</dt>
      <dd>
        <Time value={session.createdAt} />
      </dd>
    </dl>
  );
}

const LIFECYCLE_ACTIONS = {
  start: { label: "Start", flash: "Session starting" },
  stop: { label: "Stop", flash: "Session stopped" },
  restart: { label: "Restart", flash: "Session restarting" },
  logout: { label: "Log out", flash: "Session logged out" },
} as const;

function SessionActions({ slug, csrf }: { slug: string; csrf: string }) {
  const base = sessionPath(slug);
  return (
    <div class="actions">
      {Object.entries(LIFECYCLE_ACTIONS).map(([action, { label }]) => (
        <ActionButton action={`${base}/${action}`} csrf={csrf} label={label} variant="secondary" />
      ))}
      <ActionButton
        action={`${base}/delete`}
        csrf={csrf}
        label="Delete"
        variant="danger"
        confirm="Delete this session for good? It is logged out and all of its data is erased."
      />
      <a class="button" href={`${base}/pair`}>
        Pair a phone
      </a>
    </div>
  );
}

function SendTestForm({ slug, csrf, form }: { slug: string; csrf: string; form: FormState }) {
  return (
    <Form action={`${sessionPath(slug)}/send`} csrf={csrf} form={form}>
      <Field
        form={form}
        name="to"
        label="To (phone number)"
        type="tel"
        hint="With country code, e.g. 628123456789; or a full chat JID."
        required
      />
      <TextAreaField form={form} name="text" label="Message" rows={3} required />
      <div>
        <button type="submit">Send test message</button>
      </div>
    </Form>
  );
}

const SETTINGS = [
  { name: "readReceipts", label: "Send read receipts" },
  { name: "rejectCalls", label: "Reject incoming calls" },
  { name: "antiDelete", label: "Anti-delete: keep what a contact deletes" },
  { name: "alwaysOnline", label: "Always appear online" },
] as const satisfies ReadonlyArray<{ name: keyof Settings; label: string }>;

const checkedIf = (value: boolean | undefined) => (value ? "on" : "");

function settingsForm(settings: Settings): FormState {
  return blankForm(Object.fromEntries(SETTINGS.map(({ name }) => [name, checkedIf(settings[name])])));
}

function SettingsForm({ slug, csrf, form }: { slug: string; csrf: string; form: FormState }) {
  return (
    <Form action={`${sessionPath(slug)}/settings`} csrf={csrf} form={form}>
      {SETTINGS.map(({ name, label }) => (
        <CheckboxField form={form} name={name} label={label} />
      ))}
      <div>
        <button type="submit">Save settings</button>
      </div>
    </Form>
  );
}

const BOT_SWITCHES = [
  { name: "enableSticker", label: "Sticker command" },
  { name: "enableVideoSticker", label: "Video sticker command" },
  { name: "enablePing", label: "Ping command" },
  { name: "enableUptime", label: "Uptime command" },
] as const satisfies ReadonlyArray<{ name: keyof BotConfig; label: string }>;

const JID_LISTS = [
  { name: "botAllowedJids", label: "Bot: allowed chats" },
  { name: "botBlockedJids", label: "Bot: blocked chats" },
  { name: "autoReplyAllowedJids", label: "Auto-reply: allowed chats" },
  { name: "autoReplyBlockedJids", label: "Auto-reply: blocked chats" },
] as const satisfies ReadonlyArray<{ name: keyof BotConfig; label: string }>;

const MODE_OPTIONS: ReadonlyArray<{ value: (typeof ACCESS_MODES)[number]; label: string }> = [
  { value: "OWNER", label: "The account owner only" },
  { value: "SPECIFIC", label: "Only the allowed chats" },
  { value: "BLACKLIST", label: "Everyone but the blocked chats" },
  { value: "ALL", label: "Everyone" },
];

function botConfigForm(config: BotConfig): FormState {
  return blankForm({
    enabled: checkedIf(config.enabled),
    botName: config.botName,
    prefix: config.prefix,
    botMode: config.botMode,
    autoReplyMode: config.autoReplyMode,
    maxStickerDuration: String(config.maxStickerDuration),
    ...Object.fromEntries(BOT_SWITCHES.map(({ name }) => [name, checkedIf(config[name])])),
    ...Object.fromEntries(JID_LISTS.map(({ name }) => [name, config[name].join("\n")])),
  });
}

function BotConfigForm(props: { slug: string; csrf: string; form: FormState; savedKey: string | null }) {
  const { form } = props;
  const keyHint = props.savedKey
    ? `A key is saved (${props.savedKey}). Leave empty to keep it.`
    : "None saved. Needed for the background-removal sticker option.";
  return (
    <Form action={`${sessionPath(props.slug)}/bot-config`} csrf={props.csrf} form={form}>
      <CheckboxField form={form} name="enabled" label="Bot enabled" />
      <Field form={form} name="botName" label="Bot name" required />
      <Field form={form} name="prefix" label="Command prefix" hint="1 to 5 characters, e.g. #" required />
      <SelectField form={form} name="botMode" label="Who may use bot commands" options={MODE_OPTIONS} />
      <SelectField form={form} name="autoReplyMode" label="Who gets auto-replies" options={MODE_OPTIONS} />
      {JID_LISTS.map(({ name, label }) => (
        <TextAreaField
          form={form}
          name={name}
          label={label}
          rows={2}
          hint="One chat JID per line, e.g. 628123456789@s.whatsapp.net"
        />
      ))}
      {BOT_SWITCHES.map(({ name, label }) => (
        <CheckboxField form={form} name={name} label={label} />
      ))}
      <Field
        form={form}
        name="maxStickerDuration"
        label="Longest video sticker (seconds)"
        type="number"
        min="1"
        step="1"
      />
      <Field
        form={form}
        name="removeBgApiKey"
        label="remove.bg API key"
        type="password"
        autocomplete="off"
        hint={keyHint}
      />
      {props.savedKey && (
        <CheckboxField form={form} name="clearRemoveBgApiKey" label="Remove the saved remove.bg key" />
      )}
      <div>
        <button type="submit">Save bot config</button>
      </div>
    </Form>
  );
}

/** What a re-rendered detail page carries besides the session: a failed form, a notice, a new secret. */
export interface DetailExtras {
  send?: FormState;
  webhook?: FormState;
  settings?: FormState;
  botConfig?: FormState;
  /** A failed start, stop, delete…: the API's message at the top of the actions. */
  alert?: string;
  /** A confirmation shown without a redirect (the response also carries a secret). */
  notice?: string;
  newSecret?: { url: string; value: string };
}

/** The session page; `extras` puts a failed form's values and messages back in place. */
export async function showSessionDetail(
  c: Ctx,
  id: string,
  extras: DetailExtras = {},
  status: ContentfulStatusCode = 200,
) {
  const session = await c.var.api.get<SessionDetail>(sessionApi(id));
  const slug = session.sessionId;
  const [{ config }, botConfig] = await Promise.all([
    c.var.api.get<{ config: Settings }>(`${sessionApi(slug)}/settings`),
    c.var.api.get<BotConfig>(`${sessionApi(slug)}/bot-config`),
  ]);
  const csrf = c.var.csrf;
  return render(
    c,
    {
      title: session.name,
      section: "sessions",
      children: (
        <>
          <p class="muted">
            <a href="/sessions">Sessions</a> / <code>{slug}</code>
          </p>
          {extras.notice && (
            <p class="flash" role="status">
              {extras.notice}
            </p>
          )}
          {extras.newSecret && <NewSecret secret={extras.newSecret} />}
          <div class="grid">
            <section class="panel" aria-labelledby="session-status-heading">
              <h2 id="session-status-heading">Status</h2>
              <div id="session-facts" data-live="3">
                <SessionFacts session={session} />
              </div>
              {extras.alert && (
                <p class="alert" role="alert">
                  {extras.alert}
                </p>
              )}
              <SessionActions slug={slug} csrf={csrf} />
            </section>
            {/* No aria-labelledby here: its name would be one more "message" label next to the field's. */}
            <section class="panel">
              <h2>Send a test message</h2>
              <SendTestForm slug={slug} csrf={csrf} form={extras.send ?? blankForm()} />
            </section>
          </div>
          <section class="panel" aria-labelledby="webhooks-heading">
            <h2 id="webhooks-heading">Webhooks</h2>
            <WebhookTable slug={slug} webhooks={session.webhooks ?? []} />
            <h3>Add a webhook</h3>
            <AddWebhookForm slug={slug} csrf={csrf} form={extras.webhook ?? newWebhookForm()} />
          </section>
          <div class="grid">
            <section class="panel" aria-labelledby="settings-heading">
              <h2 id="settings-heading">Settings</h2>
              <SettingsForm slug={slug} csrf={csrf} form={extras.settings ?? settingsForm(config)} />
            </section>
            <section class="panel" aria-labelledby="bot-config-heading">
              <h2 id="bot-config-heading">Bot</h2>
              <BotConfigForm
                slug={slug}
                csrf={csrf}
                form={extras.botConfig ?? botConfigForm(botConfig)}
                savedKey={botConfig.removeBgApiKey}
              />
            </section>
          </div>
        </>
      ),
    },
    status,
  );
}

// ── Form bodies: form strings to the API's JSON types; the API validates ──────────────────────

/** Digits as typed ("+62 812-3456") become a person JID; anything with an `@` is taken as a JID. */
function chatJid(to: string): string {
  const trimmed = to.trim();
  return trimmed.includes("@") ? trimmed : `${trimmed.replace(/[\s()+-]/g, "")}@s.whatsapp.net`;
}

/** A whole number as a number; anything else as typed, for the API to refuse with its own words. */
function numberValue(value: string): number | string {
  return /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;
}

const jidList = (value: string) =>
  value
    .split(/[\n,]/)
    .map((jid) => jid.trim())
    .filter((jid) => jid !== "");

function botConfigBody(form: FormFields): Record<string, unknown> {
  const body: Record<string, unknown> = {
    enabled: checkboxValue(form.enabled),
    botName: fieldOf(form, "botName"),
    prefix: fieldOf(form, "prefix"),
    botMode: fieldOf(form, "botMode"),
    autoReplyMode: fieldOf(form, "autoReplyMode"),
    maxStickerDuration: numberValue(fieldOf(form, "maxStickerDuration")),
  };
  for (const { name } of BOT_SWITCHES) body[name] = checkboxValue(form[name]);
  for (const { name } of JID_LISTS) body[name] = jidList(fieldOf(form, name));
  // The saved key is never shown, so an empty field means "keep it".
  if (checkboxValue(form.clearRemoveBgApiKey) === true) body.removeBgApiKey = null;
  else if (fieldOf(form, "removeBgApiKey") !== "") body.removeBgApiKey = fieldOf(form, "removeBgApiKey");
  return body;
}

const withoutSecrets = (form: FormFields, ...names: string[]) =>
  Object.fromEntries(Object.entries(form).filter(([name]) => !names.includes(name)));

// ── Routes ───────────────────────────────────────────────────────────────────────────────────

export const sessionPages = new Hono<DashboardEnv>();

sessionPages.get("/sessions", (c) => showSessionList(c, blankForm()));

sessionPages.post("/sessions", async (c) => {
  const name = fieldOf(c.var.form, "name");
  const sessionId = fieldOf(c.var.form, "sessionId");
  const body = sessionId.trim() === "" ? { name } : { name, sessionId };
  const created = await c.var.api.send<Session>("POST", "/api/sessions", body);
  if (!created.ok) {
    // The API's 409 names no field; the only unique thing in this form is the session ID.
    const errors = created.status === 409 ? { sessionId: created.error } : created.fields;
    return showSessionList(c, { values: { name, sessionId }, errors }, failureStatus(created));
  }
  const slug = created.data.sessionId;
  // A start that fails (no bridge online yet) leaves a session the pairing page can start again.
  await c.var.api.send("POST", `${sessionApi(slug)}/start`);
  return redirectWithFlash(c, `${sessionPath(slug)}/pair`, "Session created");
});

sessionPages.get("/sessions/:id", (c) => showSessionDetail(c, c.req.param("id")));

for (const [action, { flash }] of Object.entries(LIFECYCLE_ACTIONS)) {
  sessionPages.post(`/sessions/:id/${action}`, async (c) => {
    const id = c.req.param("id");
    const result = await c.var.api.send("POST", `${sessionApi(id)}/${action}`);
    if (!result.ok) return showSessionDetail(c, id, { alert: result.error }, pageStatus(result));
    return redirectWithFlash(c, sessionPath(id), flash);
  });
}

sessionPages.post("/sessions/:id/delete", async (c) => {
  const id = c.req.param("id");
  const result = await c.var.api.send("DELETE", `${sessionApi(id)}/settings`);
  if (!result.ok) return showSessionDetail(c, id, { alert: result.error }, pageStatus(result));
  return redirectWithFlash(c, "/sessions", "Session deleted");
});

sessionPages.post("/sessions/:id/settings", async (c) => {
  const id = c.req.param("id");
  const config = Object.fromEntries(SETTINGS.map(({ name }) => [name, checkboxValue(c.var.form[name])]));
  const result = await c.var.api.send("PATCH", `${sessionApi(id)}/settings`, { config });
  if (!result.ok) {
    const errors = renameErrors(result.fields, (path) => path.replace(/^config\./, ""));
    return showSessionDetail(c, id, { settings: { values: c.var.form, errors } }, pageStatus(result));
  }
  return redirectWithFlash(c, sessionPath(id), "Settings saved");
});

sessionPages.post("/sessions/:id/bot-config", async (c) => {
  const id = c.req.param("id");
  const result = await c.var.api.send("POST", `${sessionApi(id)}/bot-config`, botConfigBody(c.var.form));
  if (!result.ok) {
    const values = withoutSecrets(c.var.form, "removeBgApiKey");
    const errors = renameErrors(result.fields, (path) => path);
    return showSessionDetail(c, id, { botConfig: { values, errors } }, pageStatus(result));
  }
  return redirectWithFlash(c, sessionPath(id), "Bot config saved");
});

/** The send route's path and body name what the form calls `to` and `text`. */
const SEND_FIELDS: Record<string, string> = { jid: "to", message: "text", "message.text": "text" };

sessionPages.post("/sessions/:id/send", async (c) => {
  const id = c.req.param("id");
  const to = fieldOf(c.var.form, "to");
  const text = fieldOf(c.var.form, "text");
  const path = `/api/messages/${encodeURIComponent(id)}/${encodeURIComponent(chatJid(to))}/send`;
  const result = await c.var.api.send("POST", path, { message: { text } });
  if (!result.ok) {
    const errors = renameErrors(result.fields, (apiPath) => SEND_FIELDS[apiPath] ?? apiPath);
    return showSessionDetail(c, id, { send: { values: { to, text }, errors } }, pageStatus(result));
  }
  return redirectWithFlash(c, sessionPath(id), "Message sent");
});
