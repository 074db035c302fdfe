import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { lineOverview, rememberOrigin } from "../../control/line";
import { database } from "../../db/client";
import { LinePanel } from "../line/panel";
import {
  apiCompanyPath,
  type BoardContext,
  type Company,
  companyNav,
  failedForm,
  loadCompany,
  optionalNumber,
} from "../ui/board-shared";
import { blankForm, CheckboxField, Field, Form, type FormState, TextAreaField } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { loadMyRole } from "../ui/member-shared";
import { failureStatus, redirectWithFlash, render } from "../ui/render";

// ---------------------------------------------------------------------------------------------
// GET/POST /companies/:id/settings: name, description, monthly budget, runs at once, the approval rule for hires.
//
// MEMBERS SLOT: the company's members are another module's (it renders its own section below the
// settings form and owns the routes under /companies/:id/settings/members). Nothing here handles
// members; see the marked place in showSettings.
// ---------------------------------------------------------------------------------------------

export const companySettingsPage = new Hono<DashboardEnv>();

const SETTINGS_FIELDS = [
  "name",
  "description",
  "budgetMonthlyCents",
  "requireBoardApprovalForNewAgents",
  "maxConcurrentRuns",
] as const;

const settingsOf = (company: Company): FormState =>
  blankForm({
    name: company.name,
    description: company.description ?? "",
    budgetMonthlyCents: String(company.budgetMonthlyCents),
    requireBoardApprovalForNewAgents: company.requireBoardApprovalForNewAgents ? "on" : "",
    maxConcurrentRuns: company.maxConcurrentRuns === null ? "" : String(company.maxConcurrentRuns),
  });

function SettingsForm({ company, csrf, form }: { company: Company; csrf: string; form: FormState }) {
  return (
    <Form action={`/companies/${company.id}/settings`} csrf={csrf} form={form} label="Company settings">
      <Field form={form} name="name" label="Company name" required />
      <TextAreaField form={form} name="description" label="Description" rows={3} />
      <Field
        form={form}
        name="budgetMonthlyCents"
        label="Monthly budget (cents)"
        type="number"
        min="0"
        step="1"
        hint="0 means no limit. At the budget every agent is paused."
      />
      <Field
        form={form}
        name="maxConcurrentRuns"
        label="Runs at once"
        type="number"
        min="1"
        step="1"
        hint="How many of the company's agent runs may execute at the same time; the rest wait in order. Empty means no limit."
      />
      <CheckboxField
        form={form}
        name="requireBoardApprovalForNewAgents"
        label="New agents need board approval"
        hint="When ticked, a hire waits under Approvals before the agent can work."
      />
      <div>
        <button type="submit">Save settings</button>
      </div>
    </Form>
  );
}

interface SettingsView {
  form?: FormState;
  status?: ContentfulStatusCode;
}

async function showSettings(c: BoardContext, companyId: string, view: SettingsView = {}) {
  const company = await loadCompany(c, companyId);
  const role = await loadMyRole(c, company.id);
  // loadCompany answered, so the viewer is a member: the line's panel reads D1 directly.
  const db = database(c.env.DB);
  const line = await lineOverview(db, company.id);
  if (line.line) await rememberOrigin(db, company.id, new URL(c.req.url).origin, Date.now());
  return render(
    c,
    {
      title: `${company.name}: settings`,
      section: "companies",
      company: companyNav(company, "settings"),
      children: (
        <>
          <section class="panel" aria-labelledby="settings-company">
            <h2 id="settings-company">Company</h2>
            <p class="muted">
              Issue prefix {company.issuePrefix} (it never changes: issue identifiers are built from it).
            </p>
            {role === "owner" ? (
              <SettingsForm company={company} csrf={c.var.csrf} form={view.form ?? settingsOf(company)} />
            ) : (
              <p class="muted">Only the company's owners change its settings.</p>
            )}
          </section>
          <LinePanel overview={line} />
          {/* MEMBERS SLOT: the members module's section goes here (routes /companies/:id/settings/members). */}
        </>
      ),
    },
    view.status ?? 200,
  );
}

companySettingsPage.get("/companies/:companyId/settings", (c) => showSettings(c, c.req.param("companyId")));

companySettingsPage.post("/companies/:companyId/settings", async (c) => {
  const companyId = c.req.param("companyId");
  const values = c.var.form;
  const description = values.description?.trim() ?? "";
  const result = await c.var.api.send<Company>("PATCH", apiCompanyPath(companyId), {
    name: values.name ?? "",
    description: description === "" ? null : description,
    budgetMonthlyCents: optionalNumber(values.budgetMonthlyCents) ?? 0,
    requireBoardApprovalForNewAgents: values.requireBoardApprovalForNewAgents === "on",
    maxConcurrentRuns: optionalNumber(values.maxConcurrentRuns) ?? null,
  });
  if (!result.ok)
    return showSettings(c, companyId, {
      form: failedForm(values, result, SETTINGS_FIELDS),
      status: failureStatus(result),
    });
  return redirectWithFlash(c, `/companies/${result.data.id}/settings`, "Settings saved");
});
