import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { packTarGz, unpackTarGz } from "../../control/packages";
import { ApiError } from "../../http/errors";
import type { FieldErrors } from "../ui/api-client";
import {
  apiCompanyPath,
  type BoardContext,
  type Company,
  companyNav,
  loadCompany,
  placeFieldMessages,
} from "../ui/board-shared";
import { blankForm, type FormState } from "../ui/components";
import type { DashboardEnv, FormFields } from "../ui/env";
import { loadMyRole, mayChange, READ_ONLY_NOTE } from "../ui/member-shared";
import { failureStatus, redirectWithFlash, render } from "../ui/render";
import {
  ExportForm,
  ExportPreview,
  IMPORT_FIELDS,
  ImportForm,
  type ImportPreview,
  ImportPreviewView,
  type PackageExport,
} from "./views";

// ---------------------------------------------------------------------------------------------
// GET /companies/:id/package: export (preview, download) and import (upload, paste or URL →
// preview of exactly what apply will create → apply).
// ---------------------------------------------------------------------------------------------

export const packagePages = new Hono<DashboardEnv>();

type Source =
  | { type: "inline"; files: unknown; rootPath?: unknown }
  | { type: "url" | "github"; url: string };
type SourceField = "packageFile" | "packageJson" | "packageUrl";
type Resolved = { ok: true; source: Source; field: SourceField } | { ok: false; errors: FieldErrors };

const packagePath = (companyId: string) => `/companies/${companyId}/package`;
const EXPORT_DEFAULTS = { agents: "on", projects: "on", issues: "" };

interface PackageView {
  exportForm?: FormState;
  importForm?: FormState;
  exported?: PackageExport;
  /** A refusal of the whole request (a viewer's forged post), shown above the page. */
  alert?: string;
  status?: ContentfulStatusCode;
}

async function showPackagePage(c: BoardContext, companyId: string, view: PackageView = {}) {
  const company = await loadCompany(c, companyId);
  const csrf = c.var.csrf;
  const editable = mayChange(await loadMyRole(c, company.id));
  return render(
    c,
    {
      title: `${company.name}: import and export`,
      section: "companies",
      company: companyNav(company, "package"),
      children: (
        <div class="grid">
          {view.alert && (
            <p class="alert" role="alert">
              {view.alert}
            </p>
          )}
          <section class="panel" aria-labelledby="package-export">
            <h2 id="package-export">Export</h2>
            <ExportForm company={company} csrf={csrf} form={view.exportForm ?? blankForm(EXPORT_DEFAULTS)} />
          </section>
          {view.exported ? (
            <ExportPreview
              company={company}
              exported={view.exported}
              csrf={editable ? csrf : null}
              form={blankForm({ newCompanyName: `${company.name} (copy)` })}
            />
          ) : editable ? (
            <section class="panel" aria-labelledby="package-import">
              <h2 id="package-import">Import</h2>
              <ImportForm
                company={company}
                csrf={csrf}
                form={view.importForm ?? blankForm({ targetMode: "new_company" })}
              />
            </section>
          ) : (
            <p class="muted">{READ_ONLY_NOTE}</p>
          )}
        </div>
      ),
    },
    view.status ?? 200,
  );
}

packagePages.get("/companies/:companyId/package", (c) => showPackagePage(c, c.req.param("companyId")));

packagePages.post("/companies/:companyId/package/export", async (c) => {
  const companyId = c.req.param("companyId");
  const values = c.var.form;
  const include = {
    company: true,
    agents: values.agents === "on",
    projects: values.projects === "on",
    issues: values.issues === "on",
  };
  const format = values.format ?? "preview";
  const path = `${apiCompanyPath(companyId)}/${format === "preview" ? "exports/preview" : "exports"}`;
  const result = await c.var.api.send<PackageExport>("POST", path, { include });
  const exportForm = blankForm(values);
  if (!result.ok)
    return showPackagePage(c, companyId, {
      exportForm: { ...exportForm, errors: { _form: result.error } },
      status: failureStatus(result),
    });
  const exported = result.data;
  if (format === "preview") return showPackagePage(c, companyId, { exportForm, exported });
  if (format === "json") {
    const body = JSON.stringify({ rootPath: exported.rootPath, files: exported.files }, null, 2);
    return c.body(body, 200, {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="${exported.rootPath}.json"`,
    });
  }
  // The API answered JSON (the permission checks are its); the archive is the same files, packed here.
  const bytes = await packTarGz(exported.files, exported.rootPath);
  return c.body(bytes.slice().buffer, 200, {
    "Content-Type": "application/gzip",
    "Content-Disposition": `attachment; filename="${exported.rootPath}.tar.gz"`,
  });
});

const problemOf = (error: unknown) =>
  error instanceof ApiError
    ? (error.detail ?? error.message)
    : error instanceof Error
      ? error.message
      : String(error);

/** `{rootPath, files}` (what Download JSON saves, or an export's whole answer) as an inline source. */
function inlineFromJson(text: string, field: SourceField): Resolved {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, errors: { [field]: `Not valid JSON: ${problemOf(error)}` } };
  }
  if (typeof parsed !== "object" || parsed === null || !("files" in parsed))
    return { ok: false, errors: { [field]: "Not a package: expected an object with files (and rootPath)" } };
  const record = parsed as { files: unknown; rootPath?: unknown };
  return { ok: true, field, source: { type: "inline", files: record.files, rootPath: record.rootPath } };
}

async function fromFile(file: File): Promise<Resolved> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (file.name.endsWith(".json") || bytes[0] === 0x7b)
    return inlineFromJson(new TextDecoder().decode(bytes), "packageFile");
  try {
    return { ok: true, field: "packageFile", source: { type: "inline", files: await unpackTarGz(bytes) } };
  } catch (error) {
    return { ok: false, errors: { packageFile: problemOf(error) } };
  }
}

/** Exactly one of the three ways to give a package. */
async function sourceFrom(c: BoardContext, values: FormFields): Promise<Resolved> {
  const body = await c.req.parseBody();
  const file = body.packageFile instanceof File && body.packageFile.size > 0 ? body.packageFile : null;
  const json = values.packageJson?.trim() ?? "";
  const url = values.packageUrl?.trim() ?? "";
  const given = [file, json, url].filter(Boolean).length;
  if (given === 0)
    return { ok: false, errors: { _form: "Choose a package file, paste a package, or give its URL." } };
  if (given > 1)
    return { ok: false, errors: { _form: "Give the package one way only: a file, a paste or a URL." } };
  if (file) return fromFile(file);
  if (json) return inlineFromJson(json, "packageJson");
  const type = /^https:\/\/github\.com\//.test(url) ? "github" : "url";
  return { ok: true, field: "packageUrl", source: { type, url } };
}

function importBody(source: Source, values: FormFields, companyId: string) {
  const name = values.newCompanyName?.trim() ?? "";
  const target =
    values.targetMode === "existing_company"
      ? { mode: "existing_company", companyId }
      : { mode: "new_company", ...(name ? { newCompanyName: name } : {}) };
  return { source, target, collisionStrategy: values.collisionStrategy || "rename" };
}

async function digestOf(preview: ImportPreview): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(preview.plan)));
  return [...new Uint8Array(hash)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** What the API would do with this package and target; nothing is written. */
async function previewImport(c: BoardContext, company: Company, source: Source, values: FormFields) {
  const body = importBody(source, values, company.id);
  const result = await c.var.api.send<ImportPreview>(
    "POST",
    `${apiCompanyPath(company.id)}/imports/preview`,
    body,
  );
  return { result, body };
}

/**
 * A viewer imports nothing: refused before the upload is read, so a viewer cannot even make the page
 * unpack an archive (the API would refuse the import itself; issue 25 H-b).
 */
async function refusedToViewer(c: BoardContext, companyId: string) {
  if (mayChange(await loadMyRole(c, companyId))) return null;
  return showPackagePage(c, companyId, { alert: READ_ONLY_NOTE, status: 403 });
}

packagePages.post("/companies/:companyId/package/import", async (c) => {
  const company = await loadCompany(c, c.req.param("companyId"));
  const refused = await refusedToViewer(c, company.id);
  if (refused) return refused;
  const values = c.var.form;
  const resolved = await sourceFrom(c, values);
  if (!resolved.ok)
    return showPackagePage(c, company.id, { importForm: { values, errors: resolved.errors }, status: 400 });
  const { result } = await previewImport(c, company, resolved.source, values);
  if (!result.ok) {
    const errors = placeFieldMessages(result, IMPORT_FIELDS, {
      source: resolved.field,
      target: "newCompanyName",
    });
    if (errors._form && !errors[resolved.field]) {
      errors[resolved.field] = errors._form;
      delete errors._form;
    }
    return showPackagePage(c, company.id, {
      importForm: { values, errors },
      status: failureStatus(result),
    });
  }
  return renderPreview(c, company, result.data, resolved.source, values);
});

async function renderPreview(
  c: BoardContext,
  company: Company,
  preview: ImportPreview,
  source: Source,
  values: FormFields,
  alert?: string,
) {
  const hidden = {
    source: JSON.stringify(source),
    targetMode: values.targetMode === "existing_company" ? "existing_company" : "new_company",
    newCompanyName: values.newCompanyName?.trim() ?? "",
    collisionStrategy: values.collisionStrategy || "rename",
    planDigest: await digestOf(preview),
  };
  return render(
    c,
    {
      title: `${company.name}: import preview`,
      section: "companies",
      company: companyNav(company, "package"),
      children: (
        <>
          {alert && (
            <p class="alert" role="alert">
              {alert}
            </p>
          )}
          <ImportPreviewView
            preview={preview}
            targetName={company.name}
            newCompany={hidden.targetMode === "new_company"}
            action={`${packagePath(company.id)}/apply`}
            csrf={c.var.csrf}
            hidden={hidden}
          />
          <p>
            <a href={packagePath(company.id)}>Start over</a>
          </p>
        </>
      ),
    },
    alert ? 409 : 200,
  );
}

/**
 * Applies the request the preview showed. The plan is computed again first and compared with the one
 * shown (its digest travels in the form): if the target changed meanwhile, the new plan is shown
 * instead of applied, so apply never does something the person did not see.
 */
packagePages.post("/companies/:companyId/package/apply", async (c) => {
  const company = await loadCompany(c, c.req.param("companyId"));
  const refused = await refusedToViewer(c, company.id);
  if (refused) return refused;
  const values = c.var.form;
  let source: Source;
  try {
    source = JSON.parse(values.source ?? "") as Source;
  } catch {
    return showPackagePage(c, company.id, {
      importForm: { values: {}, errors: { _form: "The preview's form was damaged; start again." } },
      status: 400,
    });
  }
  const { result, body } = await previewImport(c, company, source, values);
  if (!result.ok)
    return showPackagePage(c, company.id, {
      importForm: { values: {}, errors: { _form: result.error } },
      status: failureStatus(result),
    });
  if ((await digestOf(result.data)) !== values.planDigest)
    return renderPreview(
      c,
      company,
      result.data,
      source,
      values,
      "What the import would do has changed since the preview: check it again.",
    );
  const applied = await c.var.api.send<{ companyId: string; created: Record<string, number> }>(
    "POST",
    `${apiCompanyPath(company.id)}/imports/apply`,
    body,
  );
  if (!applied.ok)
    return showPackagePage(c, company.id, {
      importForm: { values: {}, errors: { _form: applied.error } },
      status: failureStatus(applied),
    });
  const counts = Object.entries(applied.data.created)
    .filter(([kind, n]) => n > 0 && kind !== "company")
    .map(([kind, n]) => `${n} ${kind}`)
    .join(", ");
  return redirectWithFlash(
    c,
    `/companies/${applied.data.companyId}`,
    `Imported${counts ? `: ${counts}` : ""}`,
  );
});
