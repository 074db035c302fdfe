import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { unpackTarGz } from "../../../../workers/control/packages/archive";
import { BASE, call, fetchWorker } from "../../helpers";
import { type ExportBody, fillTenant, HAND_WRITTEN, packageTenant } from "./fixtures";

interface ApplyBody {
  companyId: string;
  created: Record<string, number>;
  plan: Record<string, Array<{ action: string; slug: string; name: string; as?: string }>>;
  requiredInputs: Array<Record<string, unknown>>;
}

const exportOf = async (companyId: string, headers: Record<string, string>) => {
  const res = await call<ExportBody>("POST", `/api/companies/${companyId}/exports`, { headers, body: {} });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

const prefixOf = async (companyId: string) =>
  (
    await env.DB.prepare("SELECT issue_prefix AS p FROM companies WHERE id = ?")
      .bind(companyId)
      .first<{ p: string }>()
  )?.p ?? "";

describe("company package export", () => {
  it("preview leaves issues out by default and never exports secrets", async () => {
    const t = await packageTenant();
    await fillTenant(t);
    const res = await call<ExportBody>("POST", `/api/companies/${t.company.id}/exports/preview`, {
      headers: t.board.headers,
      body: {},
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const paths = Object.keys(res.body.files);
    expect(paths).toEqual(
      expect.arrayContaining([
        "COMPANY.md",
        ".switchboard.yaml",
        "agents/chief/AGENTS.md",
        "agents/tech-lead/AGENTS.md",
        "projects/website/PROJECT.md",
      ]),
    );
    expect(paths.some((path) => path.startsWith("tasks/"))).toBe(false);
    expect(res.body.manifest.counts).toMatchObject({
      agents: 3,
      goals: 2,
      projects: 1,
      routines: 1,
      tasks: 0,
    });
    expect(res.body.manifest.envInputs).toEqual([
      { agent: "tech-lead", name: "OPENAI_API_KEY" },
      { agent: "tech-lead", name: "DB" },
    ]);
    const all = JSON.stringify(res.body);
    expect(all).not.toContain("sk-live-abc123");
    expect(all).not.toContain("secret_ref");
    expect(res.body.files["agents/tech-lead/AGENTS.md"]).toContain("You lead engineering.");
    expect(res.body.files[".switchboard.yaml"]).toContain("LOG_LEVEL: debug");
  });

  it("never exports secrets recognised by value: a key format, a URL password, a token in args", async () => {
    const t = await packageTenant();
    await env.DB.prepare("UPDATE agents SET adapter_config = ? WHERE id = ?")
      .bind(
        JSON.stringify({
          command: "node",
          args: ["agent.mjs", "--api-key", "looks-plain-but-follows-a-flag", "--model", "gpt-5"],
          cwd: "/srv/app",
          env: {
            OPENAI_KEY: "not-prefixed-at-all",
            DB_URL: "postgres://app:hunter2@db:5432/x",
            MODEL: "gpt-5",
          },
        }),
        t.cto.id,
      )
      .run();
    const res = await call<ExportBody>("POST", `/api/companies/${t.company.id}/exports`, {
      headers: t.board.headers,
      body: {},
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const all = JSON.stringify(res.body);
    for (const secret of ["not-prefixed-at-all", "hunter2", "looks-plain-but-follows-a-flag"])
      expect(all, secret).not.toContain(secret);
    expect(all).toContain("gpt-5");
    expect(res.body.manifest.envInputs).toEqual(
      expect.arrayContaining([
        { agent: "tech-lead", name: "OPENAI_KEY" },
        { agent: "tech-lead", name: "env.DB_URL" },
        { agent: "tech-lead", name: "args" },
      ]),
    );
  });

  it("export includes tasks with comments and documents, selectedFiles narrows, tar.gz downloads", async () => {
    const t = await packageTenant();
    await fillTenant(t);
    const full = await exportOf(t.company.id, t.board.headers);
    const prefix = (await prefixOf(t.company.id)).toLowerCase();
    expect(full.files[`tasks/${prefix}-2/documents/plan.md`]).toContain("# Plan");
    expect(full.files[".switchboard.yaml"]).toContain("author: board");
    expect(full.files[".switchboard.yaml"]).toContain("author: tech-lead");
    expect(full.manifest.counts).toMatchObject({ tasks: 2, comments: 2, documents: 1 });

    const narrowed = await call<ExportBody>("POST", `/api/companies/${t.company.id}/exports`, {
      headers: t.board.headers,
      body: { selectedFiles: ["COMPANY.md", ".switchboard.yaml"] },
    });
    expect(Object.keys(narrowed.body.files).sort()).toEqual([".switchboard.yaml", "COMPANY.md"]);
    const unknown = await call("POST", `/api/companies/${t.company.id}/exports`, {
      headers: t.board.headers,
      body: { selectedFiles: ["nope.md"] },
    });
    expect(unknown.status).toBe(400);

    const archive = await fetchWorker(`${BASE}/api/companies/${t.company.id}/exports`, {
      method: "POST",
      headers: { ...t.board.headers, "content-type": "application/json", accept: "application/gzip" },
      body: "{}",
    });
    expect(archive.status).toBe(200);
    expect(archive.headers.get("content-type")).toBe("application/gzip");
    expect(archive.headers.get("content-disposition")).toContain(".tar.gz");
    const unpacked = await unpackTarGz(new Uint8Array(await archive.arrayBuffer()));
    expect(unpacked).toEqual(full.files);
  });
});

describe("company package import", () => {
  it("round trip: export → import as a new company → the re-export is equal apart from ids", async () => {
    const t = await packageTenant();
    await fillTenant(t);
    const source = await exportOf(t.company.id, t.board.headers);
    const body = {
      source: { type: "inline", files: source.files },
      target: { mode: "new_company", newCompanyName: t.company.name },
    };
    const preview = await call<ApplyBody>("POST", `/api/companies/${t.company.id}/imports/preview`, {
      headers: t.board.headers,
      body,
    });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    const applied = await call<ApplyBody>("POST", `/api/companies/${t.company.id}/imports/apply`, {
      headers: t.board.headers,
      body,
    });
    expect(applied.status, JSON.stringify(applied.body)).toBe(201);
    expect(applied.body.plan).toEqual(preview.body.plan);
    expect(applied.body.created).toMatchObject({
      company: 1,
      agents: 3,
      goals: 2,
      projects: 1,
      routines: 1,
      issues: 2,
      comments: 2,
      documents: 1,
    });
    expect(applied.body.requiredInputs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: "agent_env", agent: "tech-lead", name: "OPENAI_API_KEY" }),
        expect.objectContaining({ kind: "webhook_secret", routine: "weekly-report" }),
      ]),
    );
    const newId = applied.body.companyId;
    // Memberships of the source company were copied, so the second board member sees the copy.
    const copy = await exportOf(newId, t.member.headers);
    const [from, to] = [(await prefixOf(t.company.id)).toLowerCase(), (await prefixOf(newId)).toLowerCase()];
    const normalised = JSON.parse(
      JSON.stringify(copy.files)
        .replaceAll(`${to}-`, `${from}-`)
        .replaceAll(`${to.toUpperCase()}-`, `${from.toUpperCase()}-`),
    );
    // Apart from secrets: the copy never received them, so it has no inputs left to declare.
    const withoutInputs = (files: Record<string, string>) => {
      const ext = parse(files[".switchboard.yaml"] ?? "") as {
        agents: Record<string, { envInputs?: string[] }>;
      };
      for (const agent of Object.values(ext.agents)) delete agent.envInputs;
      return { ...files, ".switchboard.yaml": ext };
    };
    expect(withoutInputs(normalised)).toEqual(withoutInputs(source.files));
    expect(source.files[".switchboard.yaml"]).toContain("envInputs:");

    const agents = await env.DB.prepare("SELECT status, pause_reason FROM agents WHERE company_id = ?")
      .bind(newId)
      .all();
    expect(agents.results.every((row) => row.status === "paused" && row.pause_reason === "import")).toBe(
      true,
    );
    const triggers = await env.DB.prepare(
      "SELECT kind, public_id, secret_ciphertext, next_run_at FROM routine_triggers WHERE company_id = ? ORDER BY created_at",
    )
      .bind(newId)
      .all();
    const webhook = triggers.results.find((row) => row.kind === "webhook");
    expect(webhook?.public_id).toBeTruthy();
    expect(webhook?.secret_ciphertext).toBeTruthy();
    expect(triggers.results.find((row) => row.kind === "schedule")?.next_run_at).toBeTruthy();
    const activity = await env.DB.prepare(
      "SELECT count(*) AS n FROM activity_log WHERE company_id = ? AND action = 'company.package_imported'",
    )
      .bind(newId)
      .first<{ n: number }>();
    expect(activity?.n).toBe(1);
  });

  it("imports a hand-written package in the documented layout", async () => {
    const t = await packageTenant();
    const body = { source: { type: "inline", files: HAND_WRITTEN }, target: { mode: "new_company" } };
    const res = await call<ApplyBody>("POST", `/api/companies/${t.company.id}/imports/apply`, {
      headers: t.board.headers,
      body,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.plan.company).toMatchObject({ action: "create", name: "Tiny Co" });
    expect(res.body.created).toMatchObject({
      agents: 2,
      goals: 1,
      projects: 1,
      routines: 1,
      issues: 1,
      comments: 1,
      documents: 1,
    });
    const dev = await env.DB.prepare(
      "SELECT a.role, b.name AS boss, a.adapter_config FROM agents a JOIN agents b ON b.id = a.reports_to WHERE a.company_id = ? AND a.name = 'Dev'",
    )
      .bind(res.body.companyId)
      .first<{ role: string; boss: string; adapter_config: string }>();
    expect(dev).toMatchObject({ role: "engineer", boss: "Boss" });
    expect(JSON.parse(dev?.adapter_config ?? "{}").promptTemplate).toBe("You write code.\n");
    const issue = await env.DB.prepare(
      "SELECT title, status, priority, description FROM issues WHERE company_id = ?",
    )
      .bind(res.body.companyId)
      .first();
    expect(issue).toMatchObject({
      title: "First task",
      status: "todo",
      priority: "high",
      description: "Do the first thing.",
    });
  });

  it("into an existing company: rename gives new names, skip creates nothing that collides", async () => {
    const t = await packageTenant();
    await fillTenant(t);
    const source = await exportOf(t.company.id, t.board.headers);
    const target = { mode: "existing_company", companyId: t.company.id };
    const skip = await call<ApplyBody>("POST", `/api/companies/${t.company.id}/imports/apply`, {
      headers: t.board.headers,
      body: { source: { type: "inline", files: source.files }, target, collisionStrategy: "skip" },
    });
    expect(skip.status, JSON.stringify(skip.body)).toBe(201);
    expect(skip.body.created).toMatchObject({ agents: 0, goals: 0, projects: 0, routines: 0, issues: 0 });
    const rename = await call<ApplyBody>("POST", `/api/companies/${t.company.id}/imports/apply`, {
      headers: t.board.headers,
      body: { source: { type: "inline", files: source.files }, target },
    });
    expect(rename.status, JSON.stringify(rename.body)).toBe(201);
    expect(rename.body.plan.agents?.find((entry) => entry.slug === "chief")).toEqual({
      action: "rename",
      slug: "chief",
      name: "Chief",
      as: "Chief (2)",
    });
    expect(rename.body.created).toMatchObject({ agents: 3, goals: 2, projects: 1, routines: 1, issues: 2 });
    const lead = await env.DB.prepare(
      "SELECT b.name AS boss FROM agents a JOIN agents b ON b.id = a.reports_to WHERE a.company_id = ? AND a.name = 'Tech Lead (2)'",
    )
      .bind(t.company.id)
      .first<{ boss: string }>();
    expect(lead?.boss).toBe("Chief (2)");
    // The company keeps its one CEO: the package's CEO arrives as a general agent, as the apply said.
    const roles = await env.DB.prepare(
      "SELECT name, role FROM agents WHERE company_id = ? AND name LIKE 'Chief%'",
    )
      .bind(t.company.id)
      .all<{ name: string; role: string }>();
    expect(Object.fromEntries(roles.results.map((row) => [row.name, row.role]))).toEqual({
      Chief: "ceo",
      "Chief (2)": "general",
    });
    expect(JSON.stringify(rename.body)).toContain("imported with role general");
  });
});
