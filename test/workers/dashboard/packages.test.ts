// The import/export page in workerd: export preview and downloads (JSON, .tar.gz), import from a
// paste or an uploaded file → a preview listing exactly what apply creates → apply creates that
// company. Bad input sits next to the field it came from and writes nothing.
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { unpackTarGz } from "../../../workers/control/packages";
import { asSession, BASE, call, count, createUser, type Session } from "../helpers";
import { browse, fieldError, formError, type PageResponse, submit, submitMultipart, textOf } from "./helpers";

let owner: Session;
let stranger: Session;
let companyId: string;
let companyName: string;

interface Exported {
  rootPath: string;
  files: Record<string, string>;
}

beforeAll(async () => {
  owner = await createUser("OWNER");
  stranger = await createUser("OWNER");
  const headers = asSession(owner);
  companyName = `Export Co ${crypto.randomUUID().slice(0, 6)}`;
  const created = await call<{ id: string }>("POST", "/api/companies", {
    headers,
    body: { name: companyName, requireBoardApprovalForNewAgents: false },
  });
  companyId = created.body.id;
  for (const name of ["Ada", "Grace"])
    await call("POST", `/api/companies/${companyId}/agent-hires`, {
      headers,
      body: { name, role: "engineer", adapterType: "process", adapterConfig: { command: "node" } },
    });
  await call("POST", `/api/companies/${companyId}/projects`, { headers, body: { name: "Compiler" } });
});

const hiddenValue = (html: string, name: string) =>
  (html.match(new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`))?.[1] ?? "")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&#39;/g, "'");

/** The apply form's fields, as the browser would send them back. */
function applyFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const name of ["source", "targetMode", "newCompanyName", "collisionStrategy", "planDigest"])
    fields[name] = hiddenValue(html, name);
  return fields;
}

function upload(session: Session, file: File, fields: Record<string, string>): Promise<PageResponse> {
  return submitMultipart(session, `/companies/${companyId}/package/import`, { ...fields, packageFile: file });
}

async function exportJson(): Promise<Exported> {
  const res = await SELF.fetch(`${BASE}/companies/${companyId}/package/export`, {
    method: "POST",
    headers: { cookie: owner.cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: owner.csrf, agents: "on", projects: "on", format: "json" }),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename=".+\.json"$/);
  return res.json();
}

describe("export", () => {
  it("previews the package's files and offers to copy it", async () => {
    const page = await submit(owner, `/companies/${companyId}/package/export`, {
      agents: "on",
      projects: "on",
      format: "preview",
    });
    expect(page.status).toBe(200);
    const exported = await exportJson();
    for (const path of Object.keys(exported.files)) expect(page.html).toContain(`<code>${path}</code>`);
    expect(Object.keys(exported.files).some((path) => path.includes("ada"))).toBe(true);
    expect(page.html).toContain(`value="${companyName} (copy)"`);
  });

  it("downloads the same files as a .tar.gz", async () => {
    const res = await SELF.fetch(`${BASE}/companies/${companyId}/package/export`, {
      method: "POST",
      headers: { cookie: owner.cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: owner.csrf, agents: "on", projects: "on", format: "tar.gz" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/gzip");
    const files = await unpackTarGz(new Uint8Array(await res.arrayBuffer()));
    expect(files).toEqual((await exportJson()).files);
  });
});

describe("import: preview, then apply exactly that", () => {
  it("previews a pasted package as a new company, and apply creates the company shown", async () => {
    const companiesBefore = await count("companies");
    const preview = await submit(owner, `/companies/${companyId}/package/import`, {
      packageJson: JSON.stringify(await exportJson()),
      targetMode: "new_company",
      newCompanyName: "Copied Co",
      collisionStrategy: "rename",
    });
    expect(preview.status).toBe(200);
    const target = preview.html.match(/<p id="import-target">([\s\S]*?)<\/p>/)?.[1] ?? "";
    expect(textOf(target)).toBe("Create the company Copied Co , then:");
    const agents = preview.html.match(/<h3 id="plan-agents">[\s\S]*?<\/table>/)?.[0] ?? "";
    expect(textOf(agents)).toContain("Agents (2 to create)");
    expect(textOf(agents)).toContain("Ada create Ada");
    expect(textOf(agents)).toContain("Grace create Grace");
    expect(await count("companies")).toBe(companiesBefore);

    const applied = await submit(owner, `/companies/${companyId}/package/apply`, applyFields(preview.html));
    expect(applied.status).toBe(303);
    const newId = applied.location?.replace("/companies/", "") ?? "";
    const copied = await call<{ name: string }>("GET", `/api/companies/${newId}`, {
      headers: asSession(owner),
    });
    expect(copied.body.name).toBe("Copied Co");
    const agentsThere = await call<Array<{ name: string }>>("GET", `/api/companies/${newId}/agents`, {
      headers: asSession(owner),
    });
    expect(agentsThere.body.map((agent) => agent.name).sort()).toEqual(["Ada", "Grace"]);
    expect(await count("companies")).toBe(companiesBefore + 1);
  });

  it("previews an uploaded .tar.gz into this company, renaming what is taken", async () => {
    const res = await SELF.fetch(`${BASE}/companies/${companyId}/package/export`, {
      method: "POST",
      headers: { cookie: owner.cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: owner.csrf, agents: "on", projects: "on", format: "tar.gz" }),
    });
    const file = new File([await res.arrayBuffer()], "export.tar.gz", { type: "application/gzip" });
    const preview = await upload(owner, file, {
      targetMode: "existing_company",
      collisionStrategy: "rename",
    });
    expect(preview.status).toBe(200);
    expect(textOf(preview.html)).toContain(`Add to ${companyName}`);
    const agents = textOf(preview.html.match(/<h3 id="plan-agents">[\s\S]*?<\/table>/)?.[0] ?? "");
    expect(agents).toMatch(/Ada create, renamed Ada \S+/);
  });

  it("shows the new plan instead of applying when it changed since the preview", async () => {
    const preview = await submit(owner, `/companies/${companyId}/package/import`, {
      packageJson: JSON.stringify(await exportJson()),
      targetMode: "new_company",
      newCompanyName: "Second Copy",
    });
    const before = await count("companies");
    const stale = await submit(owner, `/companies/${companyId}/package/apply`, {
      ...applyFields(preview.html),
      planDigest: "0".repeat(64),
    });
    expect(stale.status).toBe(409);
    expect(textOf(stale.html)).toContain("has changed since the preview");
    expect(await count("companies")).toBe(before);
  });
});

describe("import: bad input next to its field, nothing written", () => {
  it("invalid JSON, an empty package, no package, and a file that is not an archive", async () => {
    const before = await count("companies");
    const badJson = await submit(owner, `/companies/${companyId}/package/import`, { packageJson: "{nope" });
    expect(badJson.status).toBe(400);
    expect(fieldError(badJson.html, "packageJson")).toMatch(/^Not valid JSON/);

    const empty = await submit(owner, `/companies/${companyId}/package/import`, {
      packageJson: JSON.stringify({ files: {} }),
    });
    expect(empty.status).toBe(400);
    expect(fieldError(empty.html, "packageJson")).toContain("Package has no files");

    const nothing = await submit(owner, `/companies/${companyId}/package/import`, {
      targetMode: "new_company",
    });
    expect(nothing.status).toBe(400);
    expect(formError(nothing.html)).toContain("Choose a package file");

    const notGzip = await upload(owner, new File(["hello"], "x.tar.gz"), { targetMode: "new_company" });
    expect(notGzip.status).toBe(400);
    expect(fieldError(notGzip.html, "packageFile")).toContain("not gzip-compressed");
    expect(await count("companies")).toBe(before);
  });

  it("answers another user's company with 404 for the page, export, preview and apply", async () => {
    expect((await browse(stranger, `/companies/${companyId}/package`)).status).toBe(404);
    const exported = await submit(stranger, `/companies/${companyId}/package/export`, { format: "json" });
    expect(exported.status).toBe(404);
    const preview = await submit(stranger, `/companies/${companyId}/package/import`, {
      packageJson: JSON.stringify({ files: { "COMPANY.md": "x" } }),
    });
    expect(preview.status).toBe(404);
  });
});
