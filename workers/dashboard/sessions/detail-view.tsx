/** The session page (settings, bot config, webhooks, the test message form), rendered with any failed form put back. */

import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { ACCESS_MODES } from "../../db/schema";
import type { BotConfigSchema, SessionDetailSchema, SessionSettingsSchema } from "../../gateway/sessions";
import {
  ActionButton,
  blankForm,
  CheckboxField,
  Field,
  Form,
  type FormState,
  SelectField,
  StatusBadge,
  TextAreaField,
  Time,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { render } from "../ui/render";
import { describeMe, formatUptime, sessionApi, sessionPath } from "./shared";
import { AddWebhookForm, NewSecret, newWebhookForm, WebhookTable } from "./webhook-form";

type SessionDetail = z.infer<typeof SessionDetailSchema>;
type BotConfig = z.infer<typeof BotConfigSchema>;
type Settings = z.infer<typeof SessionSettingsSchema>;
type Ctx = Context<DashboardEnv>;

// ── Session detail ───────────────────────────────────────────────────────────────────────────

/** Where the version came from, in words (bridge/src/whatsapp/version.ts). */
const VERSION_SOURCES = {
  pinned: "pinned by the bridge's WA_VERSION",
  fetched: "current, read from WA_VERSION_URL",
  edge: "the last that connected; the current one could not be read",
  bundled: "bundled with the bridge",
} as const;

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
      <dt>WhatsApp Web version</dt>
      <dd>
        {session.waVersion ? (
          `${session.waVersion.version} (${VERSION_SOURCES[session.waVersion.source]})`
        ) : (
          <span class="muted">—</span>
        )}
      </dd>
      <dt>Created</dt>
      <dd>
        <Time value={session.createdAt} />
      </dd>
    </dl>
  );
}

export const LIFECYCLE_ACTIONS = {
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

export const SETTINGS = [
  { name: "readReceipts", label: "Send read receipts" },
  { name: "rejectCalls", label: "Reject incoming calls" },
  { name: "antiDelete", label: "Anti-delete: keep what a contact deletes" },
  { name: "alwaysOnline", label: "Always appear online" },
] as const satisfies ReadonlyArray<{ name: keyof Settings; label: string }>;

/** Send pacing (messages/pacing.ts), in milliseconds within the API's bounds; 0 turns each off. */
export const PACING = [
  {
    name: "sendGapMs",
    label: "Minimum gap between sends (ms)",
    hint: "0 to 60000. Every send (API, bot, scheduler, line) waits its turn; one that would wait over a minute is refused. 0: no pacing.",
  },
  {
    name: "typingMs",
    label: "Typing before each send (ms)",
    hint: "0 to 10000. The chat shows “typing…” this long before each message. 0: off.",
  },
] as const satisfies ReadonlyArray<{ name: keyof Settings; label: string; hint: string }>;

const checkedIf = (value: boolean | undefined) => (value ? "on" : "");

function settingsForm(settings: Settings): FormState {
  return blankForm({
    ...Object.fromEntries(SETTINGS.map(({ name }) => [name, checkedIf(settings[name])])),
    ...Object.fromEntries(PACING.map(({ name }) => [name, String(settings[name] ?? 0)])),
  });
}

function SettingsForm({ slug, csrf, form }: { slug: string; csrf: string; form: FormState }) {
  return (
    <Form action={`${sessionPath(slug)}/settings`} csrf={csrf} form={form}>
      {SETTINGS.map(({ name, label }) => (
        <CheckboxField form={form} name={name} label={label} />
      ))}
      {PACING.map(({ name, label, hint }) => (
        <Field form={form} name={name} label={label} hint={hint} type="number" min="0" step="1" />
      ))}
      <div>
        <button type="submit">Save settings</button>
      </div>
    </Form>
  );
}

export const BOT_SWITCHES = [
  { name: "enableSticker", label: "Sticker command" },
  { name: "enableVideoSticker", label: "Video sticker command" },
  { name: "enablePing", label: "Ping command" },
  { name: "enableUptime", label: "Uptime command" },
] as const satisfies ReadonlyArray<{ name: keyof BotConfig; label: string }>;

export const JID_LISTS = [
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

function BotConfigForm(props: { slug: string; csrf: string; form: FormState; keySaved: boolean }) {
  const { form } = props;
  // The key is never shown again, not even in part: only that one is saved.
  const keyHint = props.keySaved
    ? "A key is saved (encrypted; not shown). Leave empty to keep it."
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
      {props.keySaved && (
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
                keySaved={botConfig.removeBgApiKeySet}
              />
            </section>
          </div>
        </>
      ),
    },
    status,
  );
}
