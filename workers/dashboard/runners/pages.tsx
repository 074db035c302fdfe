import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { BoardContext, Company } from "../ui/board-shared";
import { failedForm } from "../ui/board-shared";
import {
  ActionButton,
  blankForm,
  CheckboxField,
  DataTable,
  EmptyState,
  errorId,
  Field,
  Form,
  type FormState,
  StatusBadge,
  Time,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { failureStatus, redirectWithFlash, render } from "../ui/render";
import { ShownOnce } from "../ui/shown-once";

// ---------------------------------------------------------------------------------------------
// GET /runners (your runners), POST /runners (register: the token is shown once), POST
// /runners/:id/revoke. Runners are the viewer's own, like their API key, so they sit in the top bar.
// ---------------------------------------------------------------------------------------------

/** GET /api/runners (control/runners/schemas.ts RunnerSchema), the part shown here. */
interface Runner {
  id: string;
  name: string;
  tokenPrefix: string;
  allCompanies: boolean;
  companyIds: string[];
  connected: boolean;
  version: string | null;
  lastSeenAt: string | null;
  createdAt: string;
  revokedAt: string | null;
}

export const runnerPages = new Hono<DashboardEnv>();

const RUNNER_FIELDS = ["name", "companyIds", "allCompanies"] as const;
/** One checkbox per company, named `companyIds:<id>` (a form parser keeps one value per name). */
const COMPANY_BOX = "companyIds:";

function runnerState(runner: Runner): string {
  if (runner.revokedAt) return "revoked";
  return runner.connected ? "connected" : "Disconnected";
}

function RunnersTable(props: { runners: Runner[]; companies: ReadonlyMap<string, string>; csrf: string }) {
  if (props.runners.length === 0) return <EmptyState>You have no runners yet.</EmptyState>;
  return (
    <DataTable headings={["Runner", "Serves", "State", "Version", "Last seen", "Registered", "Revoke"]}>
      {props.runners.map((runner) => (
        <tr>
          <td>
            {runner.name} <code class="muted">{runner.tokenPrefix}…</code>
          </td>
          <td>
            {runner.companyIds
              .map((id) => props.companies.get(id) ?? "a company you cannot see")
              .join(", ") || "No company"}
            {runner.allCompanies && <span class="muted"> (and each company you create)</span>}
          </td>
          <td>
            <StatusBadge status={runnerState(runner)} />
          </td>
          <td>{runner.version ?? "—"}</td>
          <td>
            <Time value={runner.lastSeenAt} />
          </td>
          <td>
            <Time value={runner.createdAt} />
          </td>
          <td>
            {runner.revokedAt ? (
              <Time value={runner.revokedAt} />
            ) : (
              <ActionButton
                action={`/runners/${runner.id}/revoke`}
                csrf={props.csrf}
                label={`Revoke ${runner.name}`}
                variant="danger"
                confirm={`Revoke ${runner.name}? Its token stops working and its runs end.`}
              />
            )}
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

function CompanyBoxes({ companies, form }: { companies: Company[]; form: FormState }) {
  const error = form.errors.companyIds;
  return (
    <fieldset class="field">
      <legend>Companies it serves</legend>
      {companies.length === 0 && <p class="muted">You are on the board of no company yet.</p>}
      {companies.map((company) => {
        const name = `${COMPANY_BOX}${company.id}`;
        return (
          <label>
            <input
              type="checkbox"
              name={name}
              value="on"
              checked={form.values[name] === "on"}
              aria-describedby={error ? errorId("companyIds") : undefined}
            />{" "}
            {company.name}
          </label>
        );
      })}
      {error && (
        <p class="field-error" id={errorId("companyIds")}>
          {error}
        </p>
      )}
    </fieldset>
  );
}

function RegisterForm({ companies, csrf, form }: { companies: Company[]; csrf: string; form: FormState }) {
  return (
    <Form action="/runners" csrf={csrf} form={form} label="Register a runner">
      <Field form={form} name="name" label="Runner name" hint="e.g. my laptop, build server" required />
      <CompanyBoxes companies={companies} form={form} />
      <CheckboxField
        form={form}
        name="allCompanies"
        label="Or: every company I created, and each one I create later"
        hint="Instead of the companies ticked above. Never a company you joined by invite: attach a runner to one of those on purpose (PUT /api/companies/{companyId}/runners/{runnerId})."
      />
      <div>
        <button type="submit">Register runner</button>
      </div>
    </Form>
  );
}

interface RunnersView {
  form?: FormState;
  created?: { name: string; token: string };
  alert?: string;
  status?: ContentfulStatusCode;
}

async function showRunners(c: BoardContext, view: RunnersView = {}) {
  const [runners, companies] = await Promise.all([
    c.var.api.get<Runner[]>("/api/runners"),
    c.var.api.get<Company[]>("/api/companies"),
  ]);
  const names = new Map(companies.map((company) => [company.id, company.name] as const));
  return render(
    c,
    {
      title: "Runners",
      section: "runners",
      children: (
        <>
          {view.alert && (
            <p class="alert" role="alert">
              {view.alert}
            </p>
          )}
          {view.created && (
            <ShownOnce
              id="new-runner-token"
              heading={`Token of ${view.created.name}`}
              label="Runner token"
              value={view.created.token}
              note="Start the runner with it on standard input: EDGE_URL=<this site> npm run runner < token-file."
            />
          )}
          <section aria-labelledby="runners-list">
            <h2 id="runners-list">Your runners</h2>
            <p class="muted">
              A runner runs the agents of the companies it serves on a machine you control; see
              docs/security.md.
            </p>
            <RunnersTable runners={runners} companies={names} csrf={c.var.csrf} />
          </section>
          <section class="panel" aria-labelledby="runners-new">
            <h2 id="runners-new">Register a runner</h2>
            <RegisterForm companies={companies} csrf={c.var.csrf} form={view.form ?? blankForm()} />
          </section>
        </>
      ),
    },
    view.status ?? 200,
  );
}

runnerPages.get("/runners", (c) => showRunners(c));

/** Answered with the page itself (200): the token is in this response only. */
runnerPages.post("/runners", async (c) => {
  const values = c.var.form;
  const companyIds = Object.keys(values)
    .filter((name) => name.startsWith(COMPANY_BOX) && values[name] === "on")
    .map((name) => name.slice(COMPANY_BOX.length));
  const all = values.allCompanies === "on";
  const result = await c.var.api.send<{ runner: Runner; token: string }>("POST", "/api/runners", {
    name: values.name ?? "",
    ...(all ? { allCompanies: true } : {}),
    ...(companyIds.length > 0 ? { companyIds } : {}),
  });
  if (!result.ok)
    return showRunners(c, { form: failedForm(values, result, RUNNER_FIELDS), status: failureStatus(result) });
  return showRunners(c, { created: { name: result.data.runner.name, token: result.data.token } });
});

runnerPages.post("/runners/:runnerId/revoke", async (c) => {
  const result = await c.var.api.send(
    "DELETE",
    `/api/runners/${encodeURIComponent(c.req.param("runnerId"))}`,
  );
  if (!result.ok) return showRunners(c, { alert: result.error, status: failureStatus(result) });
  return redirectWithFlash(c, "/runners", "Runner revoked");
});
