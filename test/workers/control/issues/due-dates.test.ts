// Due dates on issues: a calendar day (YYYY-MM-DD) set on create, changed or cleared by PATCH, listed
// and filtered with dueBefore / dueAfter (inclusive), and carried through company packages with the
// issue's labels (by name) so a board can plan by date and label.
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { boardUser } from "../helpers";
import {
  createIssue,
  type ErrorBody,
  type Issue,
  issueRow,
  listIssues,
  newIssue,
  patchIssue,
  world,
} from "./fixtures";

type Dated = Issue & { dueDate: string | null };

describe("issue due dates", () => {
  it("is set on create, changed and cleared by PATCH, and returned everywhere an issue is", async () => {
    const { owner, company } = await world();
    const issue = (await newIssue(owner.headers, company, { dueDate: "2026-12-24" })) as Dated;
    expect(issue.dueDate).toBe("2026-12-24");
    expect((await issueRow(issue.id))?.due_date).toBe("2026-12-24");

    const moved = await patchIssue<Dated>(owner.headers, issue.id, { dueDate: "2027-01-05" });
    expect(moved.status).toBe(200);
    expect(moved.body.dueDate).toBe("2027-01-05");
    const detail = await call<Dated>("GET", `/api/issues/${issue.id}`, { headers: owner.headers });
    expect(detail.body.dueDate).toBe("2027-01-05");

    const cleared = await patchIssue<Dated>(owner.headers, issue.id, { dueDate: null });
    expect(cleared.body.dueDate).toBeNull();
    expect((await issueRow(issue.id))?.due_date).toBeNull();
  });

  it("refuses what is not a calendar day with a 400 that names the field, and writes nothing", async () => {
    const { owner, company } = await world();
    for (const dueDate of ["2026-02-30", "24.12.2026", "2026-12-24T10:00:00Z", 20261224, ""]) {
      const res = await createIssue<ErrorBody>(owner.headers, company, { title: "Bad date", dueDate });
      expect(res.status, String(dueDate)).toBe(400);
      expect(JSON.stringify(res.body)).toContain("dueDate");
    }
    const issue = (await newIssue(owner.headers, company, { dueDate: "2026-12-24" })) as Dated;
    const res = await patchIssue<ErrorBody>(owner.headers, issue.id, { dueDate: "2026-13-01" });
    expect(res.status).toBe(400);
    expect((await issueRow(issue.id))?.due_date).toBe("2026-12-24");
  });

  it("filters the list by dueBefore and dueAfter, inclusive; undated issues match neither", async () => {
    const { owner, company } = await world();
    const days = ["2026-12-01", "2026-12-15", "2026-12-31", null];
    const made = new Map<string | null, string>();
    for (const dueDate of days) made.set(dueDate, (await newIssue(owner.headers, company, { dueDate })).id);
    const ids = async (query: string) => {
      const res = await listIssues(owner.headers, company, `?${query}`);
      expect(res.status, query).toBe(200);
      return (res.body as Dated[]).map((issue) => issue.dueDate).sort();
    };
    expect(await ids("dueBefore=2026-12-15")).toEqual(["2026-12-01", "2026-12-15"]);
    expect(await ids("dueAfter=2026-12-15")).toEqual(["2026-12-15", "2026-12-31"]);
    expect(await ids("dueAfter=2026-12-02&dueBefore=2026-12-30")).toEqual(["2026-12-15"]);
    expect((await ids("")).length).toBe(4);
    expect((await listIssues(owner.headers, company, "?dueBefore=tomorrow")).status).toBe(400);
  });

  it("is another company's issue's to keep: an outsider's PATCH answers 404 and changes nothing", async () => {
    const { owner, company } = await world();
    const issue = (await newIssue(owner.headers, company, { dueDate: "2026-12-24" })) as Dated;
    const outsider = await boardUser();
    const res = await patchIssue<ErrorBody>(outsider.headers, issue.id, { dueDate: "2030-01-01" });
    expect(res.status).toBe(404);
    expect((await issueRow(issue.id))?.due_date).toBe("2026-12-24");
  });
});
