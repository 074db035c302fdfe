import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { SessionSchema } from "../../gateway/sessions";
import {
  blankForm,
  DataTable,
  EmptyState,
  Field,
  Form,
  type FormState,
  StatusBadge,
  Time,
} from "../ui/components";
import type { DashboardEnv, FormFields } from "../ui/env";
import { failureStatus, redirectWithFlash, render } from "../ui/render";
import {
  BOT_SWITCHES,
  JID_LISTS,
  LIFECYCLE_ACTIONS,
  PACING,
  SETTINGS,
  showSessionDetail,
} from "./detail-view";
import { checkboxValue, fieldOf, pageStatus, phoneOf, renameErrors, sessionApi, sessionPath } from "./shared";

type Session = z.infer<typeof SessionSchema>;
type Ctx = Context<DashboardEnv>;

// ── Session list ─────────────────────────────────────────────────────────────────────────────

function SessionTable({ sessions }: { sessions: Session[] }) {
  if (sessions.length === 0) return <EmptyState>No sessions yet. Create one below.</EmptyState>;
  return (
    <DataTable headings={["Name", "Session ID", "Status", "Phone", "Created"]}>
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
    </DataTable>
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
  const config = {
    ...Object.fromEntries(SETTINGS.map(({ name }) => [name, checkboxValue(c.var.form[name])])),
    // An emptied field means off, as 0 does.
    ...Object.fromEntries(PACING.map(({ name }) => [name, numberValue(fieldOf(c.var.form, name) || "0")])),
  };
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
