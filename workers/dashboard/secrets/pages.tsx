import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { SecretSchema } from "../../control/secrets";
import { PageError } from "../ui/api-client";
import {
  apiCompanyPath,
  type BoardContext,
  type Company,
  companyNav,
  failedForm,
  loadCompany,
} from "../ui/board-shared";
import {
  blankForm,
  DataTable,
  EmptyState,
  Field,
  Form,
  type FormState,
  TextAreaField,
  Time,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { loadMyRole, mayChange, READ_ONLY_NOTE } from "../ui/member-shared";
import { failureStatus, redirectWithFlash, render } from "../ui/render";

// ---------------------------------------------------------------------------------------------
// GET/POST /companies/:id/secrets (metadata and create), GET /companies/:id/secrets/:secretId with
// rotate (a new value, a new version) and rename. Values are write-only: no page ever shows one.
// ---------------------------------------------------------------------------------------------

type Secret = z.infer<typeof SecretSchema>;

export const secretPages = new Hono<DashboardEnv>();

const CREATE_FIELDS = ["name", "key", "value", "description"] as const;
const ROTATE_FIELDS = ["value"] as const;
const DETAILS_FIELDS = ["name", "description"] as const;

const secretsPath = (companyId: string) => `/companies/${companyId}/secrets`;

function SecretsTable({ company, secrets }: { company: Company; secrets: Secret[] }) {
  if (secrets.length === 0) return <EmptyState>No secrets yet.</EmptyState>;
  return (
    <DataTable headings={["Name", "Key", "Description", "Version", "Last changed"]}>
      {secrets.map((secret) => (
        <tr>
          <td>
            <a href={`${secretsPath(company.id)}/${secret.id}`}>{secret.name}</a>
          </td>
          <td>
            <code>{secret.key}</code>
          </td>
          <td>{secret.description ?? <span class="muted">—</span>}</td>
          <td>{secret.latestVersion}</td>
          <td>
            <Time value={secret.updatedAt} />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

function NewSecretForm({ company, csrf, form }: { company: Company; csrf: string; form: FormState }) {
  return (
    <Form action={secretsPath(company.id)} csrf={csrf} form={form} label="New secret">
      <Field form={form} name="name" label="Name" required />
      <Field
        form={form}
        name="key"
        label="Key (optional)"
        hint='a-z, 0-9, _, . and -; agents refer to it by this key. Default: the name lower-cased, other characters "_".'
      />
      <Field form={form} name="value" label="Value" type="password" autocomplete="off" required />
      <TextAreaField form={form} name="description" label="Description" rows={2} />
      <div>
        <button type="submit">Create secret</button>
      </div>
    </Form>
  );
}

interface ListView {
  form?: FormState;
  status?: ContentfulStatusCode;
}

async function showSecrets(c: BoardContext, companyId: string, view: ListView = {}) {
  const company = await loadCompany(c, companyId);
  const [secrets, role] = await Promise.all([
    c.var.api.get<Secret[]>(`${apiCompanyPath(company.id)}/secrets`),
    loadMyRole(c, company.id),
  ]);
  return render(
    c,
    {
      title: `${company.name}: secrets`,
      section: "companies",
      company: companyNav(company, "secrets"),
      children: (
        <>
          <section aria-labelledby="secrets-list">
            <h2 id="secrets-list">Secrets</h2>
            <p class="muted">Values are encrypted at rest and never shown again, here or in the API.</p>
            <SecretsTable company={company} secrets={secrets} />
          </section>
          {mayChange(role) ? (
            <section class="panel" aria-labelledby="secrets-new">
              <h2 id="secrets-new">New secret</h2>
              <NewSecretForm company={company} csrf={c.var.csrf} form={view.form ?? blankForm()} />
            </section>
          ) : (
            <p class="muted">{READ_ONLY_NOTE}</p>
          )}
        </>
      ),
    },
    view.status ?? 200,
  );
}

secretPages.get("/companies/:companyId/secrets", (c) => showSecrets(c, c.req.param("companyId")));

/** A blank optional field is left out; a value is sent as typed (never trimmed: it is the secret). */
const textOrUndefined = (value: string | undefined) =>
  value === undefined || value.trim() === "" ? undefined : value;

secretPages.post("/companies/:companyId/secrets", async (c) => {
  const companyId = c.req.param("companyId");
  const { value, ...kept } = c.var.form;
  const result = await c.var.api.send<Secret>("POST", `${apiCompanyPath(companyId)}/secrets`, {
    name: kept.name ?? "",
    key: textOrUndefined(kept.key)?.trim(),
    value: value ?? "",
    description: textOrUndefined(kept.description),
  });
  // The value is never put back into the page, even after a failure.
  if (!result.ok)
    return showSecrets(c, companyId, {
      form: failedForm(kept, result, CREATE_FIELDS),
      status: failureStatus(result),
    });
  return redirectWithFlash(c, secretsPath(result.data.companyId), `Secret ${result.data.name} created`);
});

/** The API has no single-secret read: the company's list is the source, so scoping is the list's. */
async function loadSecret(c: BoardContext, companyId: string, secretId: string) {
  const company = await loadCompany(c, companyId);
  const secrets = await c.var.api.get<Secret[]>(`${apiCompanyPath(company.id)}/secrets`);
  const secret = secrets.find((candidate) => candidate.id === secretId);
  if (!secret) throw new PageError(404, "Secret not found");
  return { company, secret };
}

interface DetailView {
  rotate?: FormState;
  details?: FormState;
  status?: ContentfulStatusCode;
}

async function showSecret(c: BoardContext, companyId: string, secretId: string, view: DetailView = {}) {
  const { company, secret } = await loadSecret(c, companyId, secretId);
  const editable = mayChange(await loadMyRole(c, company.id));
  const base = `${secretsPath(company.id)}/${secret.id}`;
  const details = view.details ?? blankForm({ name: secret.name, description: secret.description ?? "" });
  return render(
    c,
    {
      title: `Secret ${secret.name}`,
      section: "companies",
      company: companyNav(company, "secrets"),
      children: (
        <>
          <p>
            <a href={secretsPath(company.id)}>All secrets</a>
          </p>
          <dl class="facts">
            <dt>Key</dt>
            <dd>
              <code>{secret.key}</code>
            </dd>
            <dt>Version</dt>
            <dd>{secret.latestVersion}</dd>
            <dt>Created</dt>
            <dd>
              <Time value={secret.createdAt} />
            </dd>
            <dt>Last changed</dt>
            <dd>
              <Time value={secret.updatedAt} />
            </dd>
          </dl>
          {editable ? (
            <div class="grid">
              <section class="panel" aria-labelledby="secret-rotate">
                <h2 id="secret-rotate">Rotate</h2>
                <p class="muted">
                  A new value becomes version {secret.latestVersion + 1}; runs already started keep the
                  version they were given, later runs get only the new one. Old values are still scrubbed from
                  run output.
                </p>
                <Form
                  action={`${base}/rotate`}
                  csrf={c.var.csrf}
                  form={view.rotate ?? blankForm()}
                  label="Rotate"
                >
                  <Field
                    form={view.rotate ?? blankForm()}
                    name="value"
                    label="New value"
                    type="password"
                    autocomplete="off"
                    required
                  />
                  <div>
                    <button type="submit">Rotate secret</button>
                  </div>
                </Form>
              </section>
              <section class="panel" aria-labelledby="secret-details">
                <h2 id="secret-details">Name and description</h2>
                <Form
                  action={`${base}/details`}
                  csrf={c.var.csrf}
                  form={details}
                  label="Name and description"
                >
                  <Field form={details} name="name" label="Name" required />
                  <TextAreaField form={details} name="description" label="Description" rows={2} />
                  <div>
                    <button type="submit">Save</button>
                  </div>
                </Form>
              </section>
            </div>
          ) : (
            <p class="muted">{READ_ONLY_NOTE}</p>
          )}
        </>
      ),
    },
    view.status ?? 200,
  );
}

secretPages.get("/companies/:companyId/secrets/:secretId", (c) =>
  showSecret(c, c.req.param("companyId"), c.req.param("secretId")),
);

secretPages.post("/companies/:companyId/secrets/:secretId/rotate", async (c) => {
  const companyId = c.req.param("companyId");
  const { secret } = await loadSecret(c, companyId, c.req.param("secretId"));
  const result = await c.var.api.send<Secret>("PATCH", `/api/secrets/${secret.id}`, {
    value: c.var.form.value ?? "",
  });
  if (!result.ok)
    return showSecret(c, companyId, secret.id, {
      rotate: failedForm({}, result, ROTATE_FIELDS),
      status: failureStatus(result),
    });
  const message =
    result.data.latestVersion > secret.latestVersion
      ? `Secret ${secret.name} rotated: now version ${result.data.latestVersion}`
      : `Secret ${secret.name} unchanged: that is already its value`;
  return redirectWithFlash(c, `${secretsPath(companyId)}/${secret.id}`, message);
});

secretPages.post("/companies/:companyId/secrets/:secretId/details", async (c) => {
  const companyId = c.req.param("companyId");
  const { secret } = await loadSecret(c, companyId, c.req.param("secretId"));
  const values = c.var.form;
  const description = values.description?.trim() ?? "";
  const result = await c.var.api.send<Secret>("PATCH", `/api/secrets/${secret.id}`, {
    name: values.name ?? "",
    description: description === "" ? null : description,
  });
  if (!result.ok)
    return showSecret(c, companyId, secret.id, {
      details: failedForm(values, result, DETAILS_FIELDS),
      status: failureStatus(result),
    });
  return redirectWithFlash(c, `${secretsPath(companyId)}/${secret.id}`, `Secret ${result.data.name} saved`);
});
