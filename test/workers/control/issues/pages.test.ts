// The issue list in pages: `limit` (default 100, max 500), an opaque `cursor` from the previous
// page's X-Next-Cursor header (absent on the last page) and X-Total-Count, the number of issues the
// filters match. The body stays the array it always was.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SeededCompany } from "../helpers";
import { seedIssue } from "../helpers";
import { type ErrorBody, type Issue, listIssues, world } from "./fixtures";

const PRIORITIES = ["critical", "high", "medium", "low"] as const;

/**
 * `count` issues in one batch, numbered after the company's counter like the API does; the i-th gets
 * the priority and status the callbacks pick and shares its created_at with its neighbours (ties are
 * what a cursor on the sort key alone would get wrong).
 */
async function seedMany(
  company: SeededCompany,
  count: number,
  pick: (i: number) => { priority: (typeof PRIORITIES)[number]; status: string },
) {
  const row = await env.DB.prepare("SELECT issue_prefix, issue_counter FROM companies WHERE id = ?")
    .bind(company.id)
    .first<{ issue_prefix: string; issue_counter: number }>();
  if (!row) throw new Error("company not seeded");
  const base = Date.now() - 1_000_000;
  const statements = Array.from({ length: count }, (_, i) => {
    const { priority, status } = pick(i);
    const number = row.issue_counter + i + 1;
    const at = base + Math.floor(i / 3);
    return env.DB.prepare(
      `INSERT INTO issues (id, company_id, issue_number, identifier, title, status, priority, priority_rank,
         created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).bind(
      crypto.randomUUID(),
      company.id,
      number,
      `${row.issue_prefix}-${number}`,
      `Bulk ${i}`,
      status,
      priority,
      PRIORITIES.indexOf(priority),
      at,
      at,
    );
  });
  await env.DB.batch([
    ...statements,
    env.DB.prepare("UPDATE companies SET issue_counter = issue_counter + ? WHERE id = ?").bind(
      count,
      company.id,
    ),
  ]);
}

type Page = { status: number; body: Issue[]; total: number; next: string | null };

async function page(headers: Record<string, string>, company: SeededCompany, query: string): Promise<Page> {
  const res = await listIssues(headers, company, query);
  return {
    status: res.status,
    body: res.body,
    total: Number(res.headers.get("X-Total-Count")),
    next: res.headers.get("X-Next-Cursor"),
  };
}

/** Every page from the first, following the cursors; `between` runs after each page. */
async function walk(
  headers: Record<string, string>,
  company: SeededCompany,
  filters: string,
  between: (index: number) => Promise<void> = async () => {},
) {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?${filters}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const current = await page(headers, company, query);
    expect(current.status).toBe(200);
    pages.push(current);
    await between(pages.length);
    cursor = current.next;
  } while (cursor !== null && pages.length < 20);
  return pages;
}

describe("issue list pages", () => {
  it("pages 250 issues by 100 with a total, in priority order, without repeats or gaps", async () => {
    const { owner, company } = await world();
    await seedMany(company, 250, (i) => ({ priority: PRIORITIES[i % 4] ?? "medium", status: "todo" }));
    const pages = await walk(owner.headers, company, "");
    expect(pages.map((p) => p.body.length)).toEqual([100, 100, 50]);
    expect(pages.map((p) => p.total)).toEqual([250, 250, 250]);
    expect(pages.at(-1)?.next).toBeNull();
    const all = pages.flatMap((p) => p.body);
    expect(new Set(all.map((issue) => issue.id)).size).toBe(250);
    const ranks = all.map((issue) => PRIORITIES.indexOf(issue.priority as (typeof PRIORITIES)[number]));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    // The same order as one big page (limit 500).
    const whole = await page(owner.headers, company, "?limit=500");
    expect(whole.next).toBeNull();
    expect(all.map((issue) => issue.id)).toEqual(whole.body.map((issue) => issue.id));
  });

  it("counts and pages only what the filters match, and stays stable while issues are added", async () => {
    const { owner, company } = await world();
    await seedMany(company, 180, (i) => ({
      priority: PRIORITIES[i % 4] ?? "medium",
      status: i % 3 === 0 ? "backlog" : "todo",
    }));
    const todo = await walk(owner.headers, company, "status=todo&limit=50");
    expect(todo.map((p) => p.body.length)).toEqual([50, 50, 20]);
    expect(todo.every((p) => p.total === 120)).toBe(true);
    expect(todo.flatMap((p) => p.body).every((issue) => issue.status === "todo")).toBe(true);

    // New issues arriving between pages (urgent ones sort before the cursor, the rest after) neither
    // repeat nor push an issue already listed onto the next page.
    const added: string[] = [];
    const pages = await walk(owner.headers, company, "limit=70", async () => {
      added.push((await seedIssue(company, { priority: "critical" })).id);
      added.push((await seedIssue(company, { priority: "low" })).id);
    });
    const ids = pages.flatMap((p) => p.body.map((issue) => issue.id));
    expect(new Set(ids).size).toBe(ids.length);
    const listed = new Set(ids);
    const bulk = (await page(owner.headers, company, "?limit=500")).body.filter(
      (issue) => !added.includes(issue.id),
    );
    expect(bulk.filter((issue) => !listed.has(issue.id))).toEqual([]);
  });

  it("answers 400 to a cursor it did not hand out, or a cursor with an offset", async () => {
    const { owner, company } = await world();
    await seedMany(company, 3, () => ({ priority: "medium", status: "todo" }));
    const first = await page(owner.headers, company, "?limit=2");
    expect(first.total).toBe(3);
    expect(first.next).not.toBeNull();
    for (const query of ["?cursor=not-a-cursor", `?cursor=${btoa('{"a":1}')}`]) {
      const res = await listIssues(owner.headers, company, query);
      expect(res.status).toBe(400);
      expect((res.body as unknown as ErrorBody).error).toMatch(/cursor/);
    }
    const both = await listIssues(owner.headers, company, `?offset=1&cursor=${first.next}`);
    expect(both.status).toBe(400);
    expect((both.body as unknown as ErrorBody).error).toMatch(/cursor and offset/);
    const last = await page(owner.headers, company, `?limit=2&cursor=${first.next}`);
    expect(last.body).toHaveLength(1);
    expect(last.next).toBeNull();
  });
});
