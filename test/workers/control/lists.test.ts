// Lists at scale (issue 31): every paged list says how many rows match (X-Total-Count, exact up to
// 10,000, then X-Total-Capped) and where the next page starts (X-Next-Cursor): issues, comments,
// activity and runs; and the board endpoint reads one column per status with its total, in one batch.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers";
import { type BoardUser, boardUser, type SeededCompany, seedAgent, seedCompany, seedIssue } from "./helpers";

interface Column {
  status: string;
  total: number;
  totalCapped: boolean;
  issues: Array<{ id: string; status: string; title: string; priority: string }>;
}

const board = (headers: Record<string, string>, companyId: string, query = "") =>
  call<{ columns: Column[] }>("GET", `/api/companies/${companyId}/issues/board${query}`, { headers });

/** `count` issues of `status` in one statement, numbered after the ones there (the bulk a big company has). */
async function bulkIssues(company: SeededCompany, count: number, status: string) {
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO issues (id, company_id, issue_number, identifier, title, status, priority, priority_rank,
       created_at, updated_at)
     SELECT lower(hex(randomblob(16))), c.id, c.issue_counter + n.i, c.issue_prefix || '-' || (c.issue_counter + n.i),
       'Bulk ' || n.i, ?, 'low', 3, 1000 + n.i, 1000 + n.i
     FROM n, companies c WHERE c.id = ?`,
  )
    .bind(count, status, company.id)
    .run();
  await env.DB.prepare("UPDATE companies SET issue_counter = issue_counter + ? WHERE id = ?")
    .bind(count, company.id)
    .run();
}

/** Every page of `path` from the first, following X-Next-Cursor in `param`; each page's total. */
async function walk<T extends { id: string }>(
  headers: Record<string, string>,
  path: string,
  param: string,
): Promise<{ rows: T[]; totals: string[]; pages: number }> {
  const rows: T[] = [];
  const totals: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const separator = path.includes("?") ? "&" : "?";
    const url: string = cursor === null ? path : `${path}${separator}${param}=${encodeURIComponent(cursor)}`;
    const res = await call<T[]>("GET", url, { headers });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    rows.push(...res.body);
    totals.push(res.headers.get("X-Total-Count") ?? "missing");
    cursor = res.headers.get("X-Next-Cursor");
    pages += 1;
  } while (cursor !== null && pages < 50);
  return { rows, totals, pages };
}

let owner: BoardUser;
let company: SeededCompany;

beforeAll(async () => {
  owner = await boardUser();
  company = await seedCompany(owner);
});

describe("the board endpoint", () => {
  it("answers one column per status with its first cards in the list's order and its total", async () => {
    const own = await seedCompany(owner);
    const agent = await seedAgent(own.id);
    const low = await seedIssue(own, { status: "todo", priority: "low", title: "low todo" });
    const critical = await seedIssue(own, {
      status: "todo",
      priority: "critical",
      assigneeAgentId: agent.id,
    });
    const high = await seedIssue(own, { status: "todo", priority: "high" });
    await seedIssue(own, { status: "backlog" });
    await seedIssue(own, { status: "done", assigneeAgentId: agent.id });

    const res = await board(owner.headers, own.id, "?perColumn=2");
    expect(res.status).toBe(200);
    expect(res.body.columns.map((column) => column.status)).toEqual([
      "backlog",
      "todo",
      "in_progress",
      "in_review",
      "blocked",
      "done",
      "cancelled",
    ]);
    const todo = res.body.columns.find((column) => column.status === "todo");
    expect(todo?.total).toBe(3);
    expect(todo?.totalCapped).toBe(false);
    expect(todo?.issues.map((issue) => issue.id)).toEqual([critical.id, high.id]);
    expect(todo?.issues.map((issue) => issue.id)).not.toContain(low.id);
    expect(res.body.columns.find((column) => column.status === "done")?.total).toBe(1);

    const filtered = await board(owner.headers, own.id, `?status=todo,done&assigneeAgentId=${agent.id}`);
    expect(filtered.status).toBe(200);
    expect(filtered.body.columns.map((column) => [column.status, column.total])).toEqual([
      ["todo", 1],
      ["done", 1],
    ]);
  });

  it("refuses a bad perColumn or status with a 400 and another company's board with a 404", async () => {
    expect((await board(owner.headers, company.id, "?perColumn=0")).status).toBe(400);
    expect((await board(owner.headers, company.id, "?perColumn=201")).status).toBe(400);
    expect((await board(owner.headers, company.id, "?status=nope")).status).toBe(400);
    const stranger = await boardUser();
    expect((await board(stranger.headers, company.id)).status).toBe(404);
  });
});

describe("a list of several statuses", () => {
  // Read one status at a time and merged (routes/list.ts pageRows): the pages must be what one
  // ordered query over those statuses would give, across priorities and creation-time ties.
  it("pages in the list's order by cursor and by offset, each issue once, with the total", async () => {
    const own = await seedCompany(owner);
    const statuses = ["todo", "in_progress", "blocked", "backlog", "done"];
    const priorities = ["low", "critical", "medium", "high"];
    for (let i = 0; i < 14; i++)
      await seedIssue(own, { status: statuses[i % 5], priority: priorities[i % 4], title: `Mixed ${i}` });
    const all = await call<Array<{ id: string; status: string }>>("GET", `/api/companies/${own.id}/issues`, {
      headers: owner.headers,
    });
    const open = new Set(["todo", "in_progress", "blocked"]);
    const expected = all.body.filter((issue) => open.has(issue.status)).map((issue) => issue.id);
    expect(expected.length).toBe(9);

    const path = `/api/companies/${own.id}/issues?status=blocked,todo,in_progress&limit=2`;
    const walked = await walk<{ id: string }>(owner.headers, path, "cursor");
    expect(walked.rows.map((issue) => issue.id)).toEqual(expected);
    expect(walked.pages).toBe(5);
    expect(new Set(walked.totals)).toEqual(new Set(["9"]));

    const skipped = await call<Array<{ id: string }>>("GET", `${path}&offset=3`, { headers: owner.headers });
    expect(skipped.body.map((issue) => issue.id)).toEqual(expected.slice(3, 5));
  });
});

describe("totals past 10,000", () => {
  it("stop counting at 10,000 and say so, on the list and on the board's column", async () => {
    const big = await seedCompany(owner);
    await bulkIssues(big, 10_050, "backlog");
    await seedIssue(big, { status: "todo" });

    const list = await call<unknown[]>("GET", `/api/companies/${big.id}/issues?limit=5`, {
      headers: owner.headers,
    });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(5);
    expect(list.headers.get("X-Total-Count")).toBe("10000");
    expect(list.headers.get("X-Total-Capped")).toBe("true");
    expect(list.headers.get("X-Next-Cursor")).not.toBeNull();

    const todo = await call<unknown[]>("GET", `/api/companies/${big.id}/issues?status=todo`, {
      headers: owner.headers,
    });
    expect(todo.headers.get("X-Total-Count")).toBe("1");
    expect(todo.headers.get("X-Total-Capped")).toBeNull();

    const columns = (await board(owner.headers, big.id)).body.columns;
    const backlog = columns.find((column) => column.status === "backlog");
    expect(backlog).toMatchObject({ total: 10_000, totalCapped: true });
    expect(backlog?.issues).toHaveLength(50);
    expect(columns.find((column) => column.status === "todo")).toMatchObject({
      total: 1,
      totalCapped: false,
    });
  });
});

describe("comments, activity and runs in pages", () => {
  it("walks an issue's comments by X-Next-Cursor: each once, oldest first, with the total", async () => {
    const issue = await seedIssue(company);
    const posted: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const res = await call<{ id: string }>("POST", `/api/issues/${issue.id}/comments`, {
        headers: owner.headers,
        body: { body: `comment ${i}` },
      });
      expect(res.status).toBe(201);
      posted.push(res.body.id);
    }
    const walked = await walk<{ id: string }>(
      owner.headers,
      `/api/issues/${issue.id}/comments?limit=2`,
      "after",
    );
    expect(walked.pages).toBe(3);
    expect(walked.rows.map((row) => row.id)).toEqual(posted);
    expect(walked.totals).toEqual(["5", "5", "5"]);
  });

  it("walks the activity log by X-Next-Cursor: each entry once, newest first, total over the filter", async () => {
    const own = await seedCompany(owner);
    const at = Date.now() - 10_000;
    const ids = Array.from({ length: 7 }, (_, i) => `act-${own.id}-${i}`);
    await env.DB.batch(
      ids.map((id, i) =>
        env.DB.prepare(
          `INSERT INTO activity_log (id, company_id, actor_type, actor_id, action, entity_type, entity_id,
             details, created_at) VALUES (?, ?, 'user', ?, ?, 'issue', 'x', '{}', ?)`,
        ).bind(
          id,
          own.id,
          owner.userId,
          i % 2 === 0 ? "issue.updated" : "issue.created",
          at + Math.floor(i / 2),
        ),
      ),
    );
    const all = await walk<{ id: string }>(
      owner.headers,
      `/api/companies/${own.id}/activity?limit=3`,
      "before",
    );
    expect(all.rows.map((row) => row.id)).toEqual([...ids].reverse());
    expect(new Set(all.totals)).toEqual(new Set(["7"]));
    const updates = await walk<{ id: string }>(
      owner.headers,
      `/api/companies/${own.id}/activity?limit=2&action=issue.updated`,
      "before",
    );
    expect(updates.rows.map((row) => row.id)).toEqual(ids.filter((_, i) => i % 2 === 0).reverse());
    expect(new Set(updates.totals)).toEqual(new Set(["4"]));
  });

  it("walks the runs by X-Next-Cursor (before): each once, newest first; another company's run is a 400", async () => {
    const own = await seedCompany(owner);
    const agent = await seedAgent(own.id);
    const at = Date.now() - 10_000;
    const ids = Array.from({ length: 5 }, () => crypto.randomUUID());
    await env.DB.batch(
      ids.map((id, i) =>
        env.DB.prepare(
          `INSERT INTO heartbeat_runs (id, company_id, agent_id, status, invocation_source, wake_reason, created_at)
           VALUES (?, ?, ?, 'succeeded', 'timer', 'heartbeat_timer', ?)`,
        ).bind(id, own.id, agent.id, at + Math.floor(i / 2)),
      ),
    );
    const walked = await walk<{ id: string; createdAt: string }>(
      owner.headers,
      `/api/companies/${own.id}/heartbeat-runs?limit=2`,
      "before",
    );
    expect(walked.pages).toBe(3);
    expect(walked.rows).toHaveLength(5);
    expect(new Set(walked.rows.map((row) => row.id))).toEqual(new Set(ids));
    const times = walked.rows.map((row) => Date.parse(row.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(new Set(walked.totals)).toEqual(new Set(["5"]));

    const other = await seedCompany(owner);
    const refused = await call<{ error: string }>(
      "GET",
      `/api/companies/${other.id}/heartbeat-runs?before=${ids[0]}`,
      { headers: owner.headers },
    );
    expect(refused.status).toBe(400);
  });
});
