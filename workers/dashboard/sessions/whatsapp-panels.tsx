import type { Context } from "hono";
import type { ApiResult } from "../ui/api-client";
import { placeFieldMessages } from "../ui/board-shared";
import { ActionButton, CheckboxField, EmptyState, Field, Form, type FormState, Time } from "../ui/components";
import type { DashboardEnv, FormFields } from "../ui/env";

/**
 * The user's own number on each company's WhatsApp line (issue 28), on their own page: link a number,
 * enter the code the line sent, choose what reaches them. Every change goes through the API
 * (`/api/companies/{id}/line/members/me`), so its rules hold here as for any client.
 */

type Ctx = Context<DashboardEnv>;

export interface MyNumber {
  phone: string | null;
  verified: boolean;
  codePending: boolean;
  codeExpiresAt: string | null;
  notify: string[];
  quietHours: { start: string; end: string } | null;
  timeZone: string;
}

export interface CompanyNumber {
  company: { id: string; name: string };
  hasLine: boolean;
  mine: MyNumber;
}

/** The form that failed and its state, to show next to that company's panel. */
export interface WhatsAppFailure {
  companyId: string;
  form: FormState;
}

const KINDS = [
  { kind: "approvals", label: "Approvals my role may decide" },
  { kind: "questions", label: "Agents' questions to me" },
  { kind: "mentions", label: "Mentions of me and issues assigned to me" },
  { kind: "budget", label: "Budget incidents" },
  { kind: "failed_runs", label: "Failed runs on issues I watch" },
  { kind: "digest", label: "A daily digest at 09:00 my time (or when quiet hours end), if anything waits" },
] as const;

export const meApi = (companyId: string) => `/api/companies/${encodeURIComponent(companyId)}/line/members/me`;

/** Field names carry the company, so several panels on one page keep distinct ids. */
export const fieldIn = (companyId: string, name: string) => `${name}-${companyId}`;

/** Every company of the viewer, whether it has a line, and the viewer's number on it. */
export async function companyNumbersOf(c: Ctx): Promise<CompanyNumber[]> {
  const companies = await c.var.api.get<Array<{ id: string; name: string }>>("/api/companies");
  return Promise.all(
    companies.map(async (company) => {
      const [line, mine] = await Promise.all([
        c.var.api.read(`/api/companies/${encodeURIComponent(company.id)}/line`),
        c.var.api.get<MyNumber>(meApi(company.id)),
      ]);
      return { company: { id: company.id, name: company.name }, hasLine: line.ok, mine };
    }),
  );
}

/** The API body of the preferences form: kinds ticked, quiet hours (both empty: none), zone. */
export function preferencesBody(companyId: string, form: FormFields) {
  const value = (name: string) => (form[fieldIn(companyId, name)] ?? "").trim();
  const start = value("quietStart");
  const end = value("quietEnd");
  return {
    notify: KINDS.filter(({ kind }) => form[fieldIn(companyId, `notify_${kind}`)] === "on").map(
      (k) => k.kind,
    ),
    quietHours: start === "" && end === "" ? null : { start, end },
    timeZone: value("timeZone"),
  };
}

/** A failed submit's messages, each next to its field of that company's panel. */
export function failedWhatsAppForm(
  companyId: string,
  form: FormFields,
  result: ApiResult<unknown> & { ok: false },
): WhatsAppFailure {
  const names = ["phone", "code", "timeZone", "quietStart"];
  const fields = names.map((name) => fieldIn(companyId, name));
  const rename = {
    ...Object.fromEntries(names.map((name) => [name, fieldIn(companyId, name)])),
    // The API names quiet hours as one object; its message sits by the first of its two fields.
    quietHours: fieldIn(companyId, "quietStart"),
  };
  return { companyId, form: { values: form, errors: placeFieldMessages(result, fields, rename) } };
}

function valuesOf(companyId: string, mine: MyNumber): Record<string, string> {
  const values: Record<string, string> = {
    [fieldIn(companyId, "phone")]: mine.phone ? `+${mine.phone}` : "",
    [fieldIn(companyId, "timeZone")]: mine.timeZone,
    [fieldIn(companyId, "quietStart")]: mine.quietHours?.start ?? "",
    [fieldIn(companyId, "quietEnd")]: mine.quietHours?.end ?? "",
  };
  for (const { kind } of KINDS)
    values[fieldIn(companyId, `notify_${kind}`)] = mine.notify.includes(kind) ? "on" : "";
  return values;
}

function NumberState({ mine }: { mine: MyNumber }) {
  if (!mine.phone) return <p>No number linked: nothing is sent to you.</p>;
  return (
    <p>
      Your number: <strong>+{mine.phone}</strong>{" "}
      {mine.verified ? (
        "(verified)"
      ) : (
        <>
          (not verified: nothing is sent to it
          {mine.codePending && mine.codeExpiresAt && (
            <>
              ; the code is valid until <Time value={mine.codeExpiresAt} />
            </>
          )}
          )
        </>
      )}
    </p>
  );
}

function CompanyPanel(props: { entry: CompanyNumber; csrf: string; failure?: WhatsAppFailure }) {
  const { company, mine, hasLine } = props.entry;
  const id = company.id;
  const action = (what: string) => `/phone/${encodeURIComponent(id)}/${what}`;
  const form: FormState =
    props.failure?.companyId === id
      ? { values: { ...valuesOf(id, mine), ...props.failure.form.values }, errors: props.failure.form.errors }
      : { values: valuesOf(id, mine), errors: {} };
  return (
    <section class="panel" aria-labelledby={`whatsapp-${id}-heading`}>
      <h2 id={`whatsapp-${id}-heading`}>WhatsApp: {company.name}</h2>
      {!hasLine && !mine.phone ? (
        <EmptyState>This company has no WhatsApp line yet: an owner links one in its settings.</EmptyState>
      ) : (
        <>
          <NumberState mine={mine} />
          <Form
            action={action("number")}
            csrf={props.csrf}
            form={form}
            label={`Your number for ${company.name}`}
          >
            <Field
              form={form}
              name={fieldIn(id, "phone")}
              label="Your WhatsApp number"
              type="tel"
              hint="International form, e.g. +491701234567. The line sends it a 6-digit code."
              autocomplete="tel"
            />
            <button type="submit">Send code</button>
          </Form>
          {mine.phone && !mine.verified && (
            <Form
              action={action("verify")}
              csrf={props.csrf}
              form={form}
              label={`Confirm your number for ${company.name}`}
            >
              <Field
                form={form}
                name={fieldIn(id, "code")}
                label="Code from WhatsApp"
                autocomplete="one-time-code"
              />
              <button type="submit">Confirm</button>
            </Form>
          )}
          {mine.phone && (
            <>
              <Form
                action={action("preferences")}
                csrf={props.csrf}
                form={form}
                label={`What reaches you from ${company.name}`}
              >
                <fieldset>
                  <legend>What reaches you</legend>
                  {KINDS.map(({ kind, label }) => (
                    <CheckboxField form={form} name={fieldIn(id, `notify_${kind}`)} label={label} />
                  ))}
                </fieldset>
                <Field
                  form={form}
                  name={fieldIn(id, "quietStart")}
                  label="Quiet hours from (HH:MM)"
                  placeholder="22:00"
                />
                <Field
                  form={form}
                  name={fieldIn(id, "quietEnd")}
                  label="Quiet hours until (HH:MM)"
                  placeholder="07:00"
                />
                <Field
                  form={form}
                  name={fieldIn(id, "timeZone")}
                  label="Time zone"
                  hint="An IANA time zone, e.g. Europe/Berlin. Leave both quiet hours empty for none."
                />
                <button type="submit">Save preferences</button>
              </Form>
              <ActionButton
                action={action("unlink")}
                csrf={props.csrf}
                label="Unlink number"
                name={`Unlink your number for ${company.name}`}
                variant="danger"
                confirm="Unlink your number? The line sends you nothing more."
              />
            </>
          )}
        </>
      )}
    </section>
  );
}

export function WhatsAppPanels(props: { entries: CompanyNumber[]; csrf: string; failure?: WhatsAppFailure }) {
  if (props.entries.length === 0)
    return (
      <EmptyState>
        You belong to no company yet. Once you do, link your number here to hear from its line.
      </EmptyState>
    );
  return (
    <>
      {props.entries.map((entry) => (
        <CompanyPanel entry={entry} csrf={props.csrf} failure={props.failure} />
      ))}
    </>
  );
}
