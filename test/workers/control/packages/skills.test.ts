// Company skills travel in packages: an export writes skills/<slug>/SKILL.md for the company's skills
// (all of them with the company; those its exported agents use otherwise), and an import creates them,
// so an imported agent's desiredSkills resolve in the new company. Preview lists them; a skill whose
// key the target company already has is renamed (a new key the agent then points at) or skipped.
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import type { BoardUser } from "../helpers";
import { type ExportBody, packageTenant } from "./fixtures";

type Entry = { action: string; slug: string; name: string; as?: string };
interface ImportBody {
  companyId: string;
  created: Record<string, number>;
  plan: Record<string, Entry[]>;
  warnings: string[];
}
type Skill = { id: string; key: string; name: string; description: string | null; content: string | null };
type Agent = { id: string; name: string; desiredSkills: string[] };

const REVIEW = {
  slug: "code-review",
  name: "Code review",
  description: "How we review code",
  content: "# Code review\n\nRead the diff twice.\n",
};

async function skillCompany() {
  const t = await packageTenant();
  const imported = await call("POST", `/api/companies/${t.company.id}/skills/import`, {
    headers: t.board.headers,
    body: { skills: [REVIEW, { slug: "unused", name: "Unused", content: "Nobody wants me." }] },
  });
  expect(imported.status, JSON.stringify(imported.body)).toBe(201);
  const synced = await call("POST", `/api/agents/${t.cto.id}/skills/sync`, {
    headers: t.board.headers,
    body: { desiredSkills: ["code-review"] },
  });
  expect(synced.status, JSON.stringify(synced.body)).toBe(200);
  return t;
}

const exportOf = async (companyId: string, board: BoardUser, include?: Record<string, boolean>) => {
  const res = await call<ExportBody>("POST", `/api/companies/${companyId}/exports`, {
    headers: board.headers,
    body: include ? { include } : {},
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

async function importInto(
  board: BoardUser,
  via: string,
  files: Record<string, string>,
  target: unknown,
  extra = {},
) {
  const body = { source: { type: "inline", files }, target, ...extra };
  const preview = await call<ImportBody>("POST", `/api/companies/${via}/imports/preview`, {
    headers: board.headers,
    body,
  });
  expect(preview.status, JSON.stringify(preview.body)).toBe(200);
  const applied = await call<ImportBody>("POST", `/api/companies/${via}/imports/apply`, {
    headers: board.headers,
    body,
  });
  expect(applied.status, JSON.stringify(applied.body)).toBe(201);
  expect(applied.body.plan).toEqual(preview.body.plan);
  return applied.body;
}

const skillsOf = async (board: BoardUser, companyId: string) =>
  (await call<Skill[]>("GET", `/api/companies/${companyId}/skills`, { headers: board.headers })).body;

const agentNamed = async (board: BoardUser, companyId: string, name: string) => {
  const list = await call<Agent[]>("GET", `/api/companies/${companyId}/agents`, { headers: board.headers });
  const agent = list.body.find((row) => row.name === name);
  if (!agent) throw new Error(`no agent ${name} in ${JSON.stringify(list.body)}`);
  return agent;
};

describe("company skills in packages", () => {
  it("export writes the company's skills; import into a new company creates them and the agent's skills resolve", async () => {
    const t = await skillCompany();
    const pkg = await exportOf(t.company.id, t.board);
    expect(pkg.files["skills/code-review/SKILL.md"]).toContain("Read the diff twice.");
    expect(pkg.files["skills/code-review/SKILL.md"]).toContain("description: How we review code");
    expect(pkg.files["skills/unused/SKILL.md"]).toContain("Nobody wants me.");
    expect(pkg.manifest.counts).toMatchObject({ skills: 2 });

    const result = await importInto(t.board, t.company.id, pkg.files, { mode: "new_company" });
    expect(result.plan.skills).toEqual([
      { action: "create", slug: "code-review", name: "company/code-review" },
      { action: "create", slug: "unused", name: "company/unused" },
    ]);
    expect(result.created).toMatchObject({ skills: 2, agents: 3 });
    const skills = await skillsOf(t.board, result.companyId);
    expect(skills.map((skill) => [skill.key, skill.name, skill.description, skill.content])).toEqual([
      ["company/code-review", REVIEW.name, REVIEW.description, REVIEW.content],
      ["company/unused", "Unused", null, "Nobody wants me."],
    ]);
    const lead = await agentNamed(t.board, result.companyId, "Tech Lead");
    expect(lead.desiredSkills).toEqual(["company/code-review"]);
    // The agent's skills resolve in the new company: a sync with them is accepted, not a 422.
    const synced = await call<{ skills: Skill[] }>("POST", `/api/agents/${lead.id}/skills/sync`, {
      headers: t.board.headers,
      body: { desiredSkills: lead.desiredSkills },
    });
    expect(synced.status, JSON.stringify(synced.body)).toBe(200);
    expect(synced.body.skills.map((skill) => skill.content)).toEqual([REVIEW.content]);
  });

  it("without the company, only the skills the exported agents use come along", async () => {
    const t = await skillCompany();
    const pkg = await exportOf(t.company.id, t.board, { company: false, agents: true, projects: false });
    expect(Object.keys(pkg.files).filter((path) => path.startsWith("skills/"))).toEqual([
      "skills/code-review/SKILL.md",
    ]);
  });

  it("into a company that has the key: rename makes a new key the agent points at, skip reuses it", async () => {
    const t = await skillCompany();
    const pkg = await exportOf(t.company.id, t.board, { company: false, agents: true, projects: false });
    const target = { mode: "existing_company", companyId: t.company.id };
    const renamed = await importInto(t.board, t.company.id, pkg.files, target);
    expect(renamed.plan.skills).toEqual([
      { action: "rename", slug: "code-review", name: "company/code-review", as: "company/code-review-2" },
    ]);
    const keys = (await skillsOf(t.board, t.company.id)).map((skill) => skill.key);
    expect(keys).toEqual(["company/code-review", "company/code-review-2", "company/unused"]);
    const copy = await agentNamed(t.board, t.company.id, "Tech Lead (2)");
    expect(copy.desiredSkills).toEqual(["company/code-review-2"]);

    const skipped = await importInto(t.board, t.company.id, pkg.files, target, { collisionStrategy: "skip" });
    expect(skipped.plan.skills).toEqual([
      { action: "skip", slug: "code-review", name: "company/code-review" },
    ]);
    expect(skipped.created).toMatchObject({ skills: 0 });
    expect((await skillsOf(t.board, t.company.id)).length).toBe(3);
  });

  it("an agent wanting a skill neither the package nor the company has drops it, with a warning", async () => {
    const t = await packageTenant();
    const files = {
      "COMPANY.md": "---\nname: Lone Co\n---\n",
      "agents/dev/AGENTS.md": "---\nname: Dev\n---\n\nYou write code.\n",
      "skills/testing/SKILL.md":
        "---\nname: Testing\ndescription: Write tests first\n---\n\nRed, green, refactor.\n",
      ".switchboard.yaml":
        "schema: switchboard/v1\nagents:\n  dev:\n    desiredSkills: [testing, company/ghost]\n",
    };
    const result = await importInto(t.board, t.company.id, files, { mode: "new_company" });
    expect(result.warnings).toEqual(expect.arrayContaining([expect.stringContaining('"company/ghost"')]));
    const dev = await agentNamed(t.board, result.companyId, "Dev");
    expect(dev.desiredSkills).toEqual(["company/testing"]);
  });
});
