// Every documented filter of the issue list (status, assignee, project, label, parent, text search,
// due dates), the board, and the comments, activity and runs lists are served by an index (issue 31):
// the statements each endpoint really sends (recorded by the data layer's meter) are explained by
// SQLite, and none may read a whole table or sort the company's issues to find its first page.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { recordStatements } from "../../../../workers/meter/meter";
import { call } from "../../helpers";
import { seedAgent, seedIssue } from "../helpers";
import { world } from "./fixtures";

type World = Awaited<ReturnType<typeof world>>;
let w: World;
let ids: { project: string; label: string; parent: string; agent: string };

beforeAll(async () => {
  w = await world();
  const agent = await seedAgent(w.company.id);
  const parent = await seedIssue(w.company, { assigneeAgentId: agent.id });
  const project = await call<{ id: string }>("POST", `/api/companies/${w.company.id}/projects`, {
    headers: w.owner.headers,
    body: { name: "Plans" },
  });
  const label = await call<{ id: string }>("POST", `/api/companies/${w.company.id}/labels`, {
    headers: w.owner.headers,
    body: { name: "plans", color: "#336699" },
  });
  expect(project.status).toBe(201);
  expect(label.status).toBe(201);
  ids = { project: project.body.id, label: label.body.id, parent: parent.id, agent: agent.id };
});

/** The plan lines of each statement `path` sends that reads `table`. */
async function plansOf(path: string, table: string): Promise<string[][]> {
  const stop = recordStatements();
  const res = await call("GET", path, { headers: w.owner.headers });
  const statements = stop();
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const reading = statements.filter((sql) => new RegExp(`from "${table}"`, "i").test(sql));
  expect(reading.length, `no statement of ${path} reads ${table}`).toBeGreaterThan(0);
  return Promise.all(
    reading.map(async (sql) => {
      // The plan does not depend on the values: each placeholder is bound to null.
      const placeholders = sql.match(/\?/g)?.length ?? 0;
      const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .bind(...Array.from({ length: placeholders }, () => null))
        .all<{ detail: string }>();
      return plan.results.map((row) => row.detail);
    }),
  );
}

/** No full scan of `table` (an index search, or a scan of a covering index bounded by the query). */
function expectIndexed(plans: string[][], table: string) {
  for (const plan of plans) {
    const text = plan.join("\n");
    expect(text, text).not.toMatch(new RegExp(`^SCAN ${table}$`, "m"));
    expect(text, text).toMatch(new RegExp(`SEARCH ${table}|SCAN ${table} USING`));
  }
}

describe("the issue list's query plans", () => {
  /** Each documented filter, and the index its page and its count must lead with. */
  const filters = (): Record<string, [query: string, index: RegExp]> => ({
    "no filter": ["", /SEARCH issues USING (COVERING )?INDEX issues_company_priority_idx/],
    status: ["status=todo", /SEARCH issues USING (COVERING )?INDEX issues_company_status_idx/],
    // An agent's open work (my_inbox): each status read from the status index, never the company.
    "several statuses": [
      "status=todo,in_progress,blocked",
      /SEARCH issues USING (COVERING )?INDEX issues_company_status_idx/,
    ],
    "assignee agent": [`assigneeAgentId=${ids.agent}`, /SEARCH issues USING INDEX issues_assignee_agent_idx/],
    "assignee user": [
      `assigneeUserId=${w.owner.userId}`,
      /SEARCH issues USING INDEX issues_assignee_user_idx/,
    ],
    project: [`projectId=${ids.project}`, /SEARCH issues USING INDEX issues_project_idx/],
    label: [
      `labelId=${ids.label}`,
      /SEARCH issue_labels USING (COVERING )?INDEX issue_labels_label_idx|SEARCH issues USING INDEX sqlite_autoindex_issues_1 \(id=\?\)/,
    ],
    parent: [`parentId=${ids.parent}`, /SEARCH issues USING INDEX issues_parent_idx/],
    "due before": ["dueBefore=2030-01-01", /SEARCH issues USING (COVERING )?INDEX issues_company_due_idx/],
    "text search": ["q=plans", /SEARCH issues USING INDEX sqlite_autoindex_issues_1 \(id=\?\)/],
  });

  it("serves every documented filter from the filter's own index, never by walking the company", async () => {
    for (const [name, [query, index]] of Object.entries(filters())) {
      const plans = await plansOf(`/api/companies/${w.company.id}/issues?${query}`, "issues");
      expectIndexed(plans, "issues");
      for (const plan of plans) expect(plan.join("\n"), name).toMatch(index);
      if (name === "text search") expect(plans.flat().join("\n")).toMatch(/VIRTUAL TABLE INDEX/);
    }
  });

  it("reads the first page of the unfiltered and the status list in order, without sorting", async () => {
    for (const query of ["", "status=todo", "status=todo,in_progress,blocked"]) {
      const plans = await plansOf(`/api/companies/${w.company.id}/issues?${query}`, "issues");
      // Every statement that reads a page (the count has no ORDER BY to sort for).
      for (const plan of plans) expect(plan.join("\n"), query).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
    }
  });

  it("reads each board column in order from the status index", async () => {
    const plans = await plansOf(`/api/companies/${w.company.id}/issues/board`, "issues");
    expectIndexed(plans, "issues");
    for (const plan of plans) expect(plan.join("\n")).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
  });
});

describe("the other lists' query plans", () => {
  it("serves comments, activity, company events and runs from their indexes, in order", async () => {
    const issue = await seedIssue(w.company);
    const cases: Array<[string, string]> = [
      [`/api/issues/${issue.id}/comments`, "issue_comments"],
      [`/api/companies/${w.company.id}/activity`, "activity_log"],
      // The company's events from a cursor (issue 33): (company_id, seq), no sort.
      [`/api/companies/${w.company.id}/events?after=0&limit=1000`, "activity_log"],
      [`/api/companies/${w.company.id}/heartbeat-runs`, "heartbeat_runs"],
    ];
    for (const [path, table] of cases) {
      const plans = await plansOf(path, table);
      expectIndexed(plans, table);
      for (const plan of plans) expect(plan.join("\n"), path).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
    }
  });
});
