import type { ImportPlan, PlanEntry } from "../../control/packages";
import type { Company } from "../ui/board-shared";
import {
  CheckboxField,
  DataTable,
  EmptyState,
  errorId,
  Field,
  Form,
  type FormState,
  SelectField,
  TextAreaField,
} from "../ui/components";

/** The parts of the import/export page (pages.tsx). */

export interface ImportPreview {
  plan: ImportPlan;
  warnings: string[];
  requiredInputs: Array<Record<string, unknown>>;
}
export interface PackageExport {
  rootPath: string;
  manifest: Record<string, unknown>;
  files: Record<string, string>;
}

export const IMPORT_FIELDS = [
  "packageFile",
  "packageJson",
  "packageUrl",
  "targetMode",
  "newCompanyName",
  "collisionStrategy",
] as const;

const bytes = (text: string) => new TextEncoder().encode(text).length;

export function ExportForm({ company, csrf, form }: { company: Company; csrf: string; form: FormState }) {
  return (
    <Form action={`/companies/${company.id}/package/export`} csrf={csrf} form={form} label="Export">
      <CheckboxField form={form} name="agents" label="Agents" />
      <CheckboxField form={form} name="projects" label="Projects, goals and routines" />
      <CheckboxField form={form} name="issues" label="Issues, with their comments and documents" />
      <p class="muted">
        Secret values are never exported: the package lists which ones a receiver must supply.
      </p>
      <div class="actions">
        <button type="submit" name="format" value="preview">
          Preview export
        </button>
        <button type="submit" name="format" value="tar.gz" class="secondary">
          Download .tar.gz
        </button>
        <button type="submit" name="format" value="json" class="secondary">
          Download JSON
        </button>
      </div>
    </Form>
  );
}

function TargetFields({ form }: { form: FormState }) {
  return (
    <>
      <SelectField
        form={form}
        name="targetMode"
        label="Import into"
        options={[
          { value: "new_company", label: "A new company" },
          { value: "existing_company", label: "This company" },
        ]}
      />
      <Field
        form={form}
        name="newCompanyName"
        label="New company's name"
        hint="For a new company; default: the package's name."
      />
      <SelectField
        form={form}
        name="collisionStrategy"
        label="When a name is taken"
        options={[
          { value: "rename", label: "Import under a new name" },
          { value: "skip", label: "Skip it" },
        ]}
      />
    </>
  );
}

export function ImportForm({ company, csrf, form }: { company: Company; csrf: string; form: FormState }) {
  const fileError = form.errors.packageFile;
  return (
    <form
      method="post"
      action={`/companies/${company.id}/package/import`}
      enctype="multipart/form-data"
      class="stack"
      aria-label="Import"
      novalidate
    >
      <input type="hidden" name="_csrf" value={csrf} />
      {form.errors._form && (
        <p class="alert" role="alert" id={errorId("_form")}>
          {form.errors._form}
        </p>
      )}
      <div class="field">
        <label for="field-packageFile">Package file (.tar.gz or .json)</label>
        <input
          id="field-packageFile"
          name="packageFile"
          type="file"
          accept=".gz,.tgz,.json,application/gzip,application/json"
          aria-invalid={fileError ? "true" : undefined}
          aria-describedby={fileError ? errorId("packageFile") : undefined}
        />
        {fileError && (
          <p class="field-error" id={errorId("packageFile")}>
            {fileError}
          </p>
        )}
      </div>
      <TextAreaField
        form={form}
        name="packageJson"
        label="Or paste a package (JSON)"
        rows={4}
        hint="What Download JSON saves: {rootPath, files}."
      />
      <Field
        form={form}
        name="packageUrl"
        label="Or a URL"
        type="url"
        hint="A .tar.gz package, or https://github.com/<owner>/<repo>."
      />
      <TargetFields form={form} />
      <div>
        <button type="submit">Preview the import</button>
      </div>
    </form>
  );
}

/** A package someone just exported, offered for import into a new company without a download. */
export function ExportPreview(props: {
  company: Company;
  exported: PackageExport;
  /** Null for a viewer: importing is a write, so no copy form. */
  csrf: string | null;
  form: FormState;
}) {
  const { exported, csrf } = props;
  const paths = Object.keys(exported.files).sort();
  return (
    <section class="panel" aria-labelledby="export-preview">
      <h2 id="export-preview">Package {exported.rootPath}</h2>
      <DataTable headings={["File", "Size (bytes)"]}>
        {paths.map((path) => (
          <tr>
            <td>
              <code>{path}</code>
            </td>
            <td>{bytes(exported.files[path] ?? "")}</td>
          </tr>
        ))}
      </DataTable>
      {csrf !== null && (
        <>
          <h3>Copy it into a new company</h3>
          <Form
            action={`/companies/${props.company.id}/package/import`}
            csrf={csrf}
            form={props.form}
            label="Copy into a new company"
          >
            <input
              type="hidden"
              name="packageJson"
              value={JSON.stringify({ rootPath: exported.rootPath, files: exported.files })}
            />
            <input type="hidden" name="targetMode" value="new_company" />
            <Field form={props.form} name="newCompanyName" label="New company's name" />
            <input type="hidden" name="collisionStrategy" value="rename" />
            <div>
              <button type="submit">Preview the import</button>
            </div>
          </Form>
        </>
      )}
    </section>
  );
}

const ACTION_WORDS: Record<PlanEntry["action"], string> = {
  create: "create",
  rename: "create, renamed",
  skip: "skip",
};

function PlanTable({ heading, entries }: { heading: string; entries: PlanEntry[] }) {
  const id = `plan-${heading.toLowerCase().replace(/\W+/g, "-")}`;
  return (
    <section aria-labelledby={id}>
      <h3 id={id}>
        {heading} ({entries.filter((entry) => entry.action !== "skip").length} to create)
      </h3>
      {entries.length === 0 ? (
        <EmptyState>None in the package.</EmptyState>
      ) : (
        <DataTable headings={["In the package", "Will", "As"]}>
          {entries.map((entry) => (
            <tr>
              <td>{entry.name}</td>
              <td>{ACTION_WORDS[entry.action]}</td>
              <td>{entry.action === "skip" ? "—" : (entry.as ?? entry.name)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

function describeInput(input: Record<string, unknown>): string {
  if (input.kind === "agent_env")
    return `Agent ${String(input.agent)} needs the environment value ${String(input.name)}`;
  return `Routine ${String(input.routine)}: ${String(input.name)}`;
}

/** Everything apply will do, as the API planned it; the apply form carries the same request. */
export function ImportPreviewView(props: {
  preview: ImportPreview;
  targetName: string;
  newCompany: boolean;
  action: string;
  csrf: string;
  hidden: Record<string, string>;
}) {
  const { plan, warnings, requiredInputs } = props.preview;
  return (
    <section class="panel" aria-labelledby="import-preview">
      <h2 id="import-preview">What the import will do</h2>
      <p id="import-target">
        {props.newCompany ? (
          <>
            Create the company <strong>{plan.company.as ?? plan.company.name}</strong>, then:
          </>
        ) : (
          <>
            Add to <strong>{props.targetName}</strong>:
          </>
        )}
      </p>
      <PlanTable heading="Agents" entries={plan.agents} />
      <PlanTable heading="Projects" entries={plan.projects} />
      <PlanTable heading="Goals" entries={plan.goals} />
      <PlanTable heading="Issues" entries={plan.issues} />
      <PlanTable heading="Routines" entries={plan.routines} />
      {warnings.length > 0 && (
        <>
          <h3>Warnings</h3>
          <ul>
            {warnings.map((warning) => (
              <li>{warning}</li>
            ))}
          </ul>
        </>
      )}
      {requiredInputs.length > 0 && (
        <>
          <h3>To supply after the import</h3>
          <ul>
            {requiredInputs.map((input) => (
              <li>{describeInput(input)}</li>
            ))}
          </ul>
        </>
      )}
      <form method="post" action={props.action} class="inline" aria-label="Apply the import">
        <input type="hidden" name="_csrf" value={props.csrf} />
        {Object.entries(props.hidden).map(([name, value]) => (
          <input type="hidden" name={name} value={value} />
        ))}
        <button type="submit">Apply: import exactly this</button>
      </form>
    </section>
  );
}
