// The issue page's questions, attachments and blockers over its live socket (GET /api/issues/{id}/events):
// asking and answering, attaching and removing a file, and a blocker changing its status are each
// announced on the issue's feed after they commit; the board hears none of it.
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { seedCompany, seedIssue } from "../helpers";
import { events, listen, signedInOwner } from "./sockets";

const NOTE = new TextEncoder().encode("meeting notes\n");

function attach(headers: Record<string, string>, issueId: string) {
  const form = new FormData();
  form.append("file", new File([NOTE], "notes.txt", { type: "text/plain" }));
  return call<{ id: string }>("POST", `/api/issues/${issueId}/attachments`, { headers, rawBody: form });
}

describe("live sockets: the issue page's other sections", () => {
  it("announces questions and attachments on the issue's feed, not the board's", async () => {
    const owner = await signedInOwner();
    const company = await seedCompany(owner);
    const issue = await seedIssue(company, { status: "todo" });
    const page = await listen(`/api/issues/${issue.id}/events`, owner.cookieHeaders);
    const board = await listen(`/api/companies/${company.id}/events`, owner.cookieHeaders);

    const asked = await call<{ id: string }>("POST", `/api/issues/${issue.id}/questions`, {
      headers: owner.headers,
      body: { body: "Which colour?" },
    });
    expect(asked.status).toBe(201);
    expect(await page.next((f) => f.kind === "question.changed")).toMatchObject({
      issueId: issue.id,
      companyId: company.id,
      questionId: asked.body.id,
    });
    const answered = await call("POST", `/api/issues/${issue.id}/questions/${asked.body.id}/answer`, {
      headers: owner.headers,
      body: { answer: "Blue" },
    });
    expect(answered.status).toBe(200);

    const attached = await attach(owner.headers, issue.id);
    expect(attached.status).toBe(201);
    expect(await page.next((f) => f.kind === "attachment.changed")).toMatchObject({
      attachmentId: attached.body.id,
    });
    const removed = await call("DELETE", `/api/issues/${issue.id}/attachments/${attached.body.id}`, {
      headers: owner.headers,
    });
    expect(removed.status).toBe(204);
    await page.next((f) => f.kind === "attachment.changed" && f.seq === 4);

    expect(events(page).map((f) => f.kind)).toEqual([
      "question.changed",
      "question.changed",
      "attachment.changed",
      "attachment.changed",
    ]);
    // A refused upload (not an allowed type) announces nothing.
    const refused = new FormData();
    refused.append("file", new File([NOTE], "run.sh", { type: "application/x-sh" }));
    const bad = await call("POST", `/api/issues/${issue.id}/attachments`, {
      headers: owner.headers,
      rawBody: refused,
    });
    expect(bad.status).toBe(415);
    const touched = await call("PATCH", `/api/issues/${issue.id}`, {
      headers: owner.headers,
      body: { title: "Colour picked" },
    });
    expect(touched.status).toBe(200);
    expect(await page.next((f) => f.kind === "issue.updated")).toMatchObject({ seq: 5 });
    await board.next((f) => f.kind === "issue.updated");
    expect(events(board).map((f) => f.kind)).toEqual(["issue.updated"]);
    for (const link of [page, board]) link.socket.close(1000, "done");
  });

  it("tells the pages of the issues a blocker blocks when the blocker's status changes", async () => {
    const owner = await signedInOwner();
    const company = await seedCompany(owner);
    const blocker = await seedIssue(company, { status: "todo" });
    const first = await seedIssue(company, { status: "todo" });
    const second = await seedIssue(company, { status: "todo" });
    const bystander = await seedIssue(company, { status: "todo" });
    for (const dependent of [first, second]) {
      const linked = await call("PATCH", `/api/issues/${dependent.id}`, {
        headers: owner.headers,
        body: { blockedByIssueIds: [blocker.id] },
      });
      expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    }
    const watch = (issue: { id: string }) => listen(`/api/issues/${issue.id}/events`, owner.cookieHeaders);
    const [firstPage, secondPage, bystanderPage] = [
      await watch(first),
      await watch(second),
      await watch(bystander),
    ];
    const pages = [firstPage, secondPage, bystanderPage];
    // A change that leaves the status as it was is no news for the dependents.
    const renamed = await call("PATCH", `/api/issues/${blocker.id}`, {
      headers: owner.headers,
      body: { title: "Still todo" },
    });
    expect(renamed.status).toBe(200);
    const resolved = await call("PATCH", `/api/issues/${blocker.id}`, {
      headers: owner.headers,
      body: { status: "cancelled" },
    });
    expect(resolved.status).toBe(200);
    for (const page of [firstPage, secondPage])
      expect(await page.next((f) => f.kind === "blocker.changed")).toMatchObject({
        blockerIssueId: blocker.id,
        status: "cancelled",
      });
    expect(events(firstPage).map((f) => f.kind)).toEqual(["blocker.changed"]);
    expect(events(secondPage)).toHaveLength(1);
    expect(events(bystanderPage)).toEqual([]);
    for (const page of pages) page.socket.close(1000, "done");
  });
});
