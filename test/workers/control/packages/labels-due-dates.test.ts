// A package carries each task's due date and labels (by name, since label ids are the instance's own):
// exported, imported into a new company (labels created there), and into a company that already has
// a label of that name in another case (reused, never duplicated).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { call } from "../../helpers";
import { type ExportBody, fillTenant, packageTenant } from "./fixtures";

interface ApplyBody {
  companyId: string;
}

type TaskEntry = { dueDate?: string; labels?: string[] };

const exportOf = async (companyId: string, headers: Record<string, string>) => {
  const res = await call<ExportBody>("POST", `/api/companies/${companyId}/exports`, { headers, body: {} });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

/** The imported issues called `title` in `companyId`: due date and label names. */
async function issuesTitled(companyId: string, title: string) {
  const rows = await env.DB.prepare(
    `SELECT i.id, i.due_date, group_concat(l.name, ',') AS names
       FROM issues i LEFT JOIN issue_labels il ON il.issue_id = i.id LEFT JOIN labels l ON l.id = il.label_id
      WHERE i.company_id = ? AND i.title LIKE ? GROUP BY i.id ORDER BY i.created_at`,
  )
    .bind(companyId, `${title}%`)
    .all<{ id: string; due_date: string | null; names: string | null }>();
  return rows.results.map((row) => ({
    dueDate: row.due_date,
    labels: (row.names ?? "").split(",").filter(Boolean).sort(),
  }));
}

describe("package tasks: due dates and labels", () => {
  it("are exported by name and recreated in a new company", async () => {
    const t = await packageTenant();
    await fillTenant(t);
    const source = await exportOf(t.company.id, t.board.headers);
    const ext = parse(source.files[".switchboard.yaml"] ?? "") as { tasks: Record<string, TaskEntry> };
    // Tasks are keyed by identifier; the parent ("Launch the site") is the first one created.
    const [parent, child] = Object.values(ext.tasks);
    expect(parent).toMatchObject({ dueDate: "2026-12-24", labels: ["Urgent", "launch"] });
    expect(child?.labels).toBeUndefined();
    expect(child?.dueDate).toBeUndefined();

    const applied = await call<ApplyBody>("POST", `/api/companies/${t.company.id}/imports/apply`, {
      headers: t.board.headers,
      body: {
        source: { type: "inline", files: source.files },
        target: { mode: "new_company", newCompanyName: `${t.company.name} copy` },
      },
    });
    expect(applied.status, JSON.stringify(applied.body)).toBe(201);
    expect(await issuesTitled(applied.body.companyId, "Launch the site")).toEqual([
      { dueDate: "2026-12-24", labels: ["Urgent", "launch"] },
    ]);
  });

  it("reuse the company's label of the same name in any case instead of adding a second", async () => {
    const t = await packageTenant();
    await fillTenant(t);
    const source = await exportOf(t.company.id, t.board.headers);
    const applied = await call<ApplyBody>("POST", `/api/companies/${t.company.id}/imports/apply`, {
      headers: t.board.headers,
      body: {
        source: { type: "inline", files: source.files },
        target: { mode: "existing_company", companyId: t.company.id },
      },
    });
    expect(applied.status, JSON.stringify(applied.body)).toBe(201);
    const labels = await env.DB.prepare("SELECT name FROM labels WHERE company_id = ? ORDER BY name")
      .bind(t.company.id)
      .all<{ name: string }>();
    expect(labels.results.map((row) => row.name)).toEqual(["Urgent", "launch"]);
    expect(await issuesTitled(t.company.id, "Launch the site")).toEqual([
      { dueDate: "2026-12-24", labels: ["Urgent", "launch"] },
      { dueDate: "2026-12-24", labels: ["Urgent", "launch"] },
    ]);
  });
});
