// People by name: every response that names an actor by id also carries the display name, resolved
// in the company (another company's agent names nobody).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { boardUser, seedAgent, seedCompany } from "../helpers";
import { newIssue, patchIssue, world } from "../issues/fixtures";

type Json = Record<string, unknown>;

const rename = (userId: string, name: string) =>
  env.DB.prepare("UPDATE users SET name = ? WHERE id = ?").bind(name, userId).run();

async function named() {
  const ada = await boardUser();
  const { owner, company, engineer, ceo } = await world({ members: [ada] });
  await rename(owner.userId, "Olive Owner");
  await rename(ada.userId, "Ada Lovelace");
  return { owner, ada, company, engineer, ceo };
}

describe("names of actors", () => {
  it("comments: POST, PATCH's comment, the list and one comment carry authorName", async () => {
    const { owner, ada, company, engineer } = await named();
    const issue = await newIssue(owner.headers, company);
    const posted = await call<Json>("POST", `/api/issues/${issue.id}/comments`, {
      headers: ada.headers,
      body: { body: "from Ada" },
    });
    expect(posted.body).toMatchObject({ authorUserId: ada.userId, authorName: "Ada Lovelace" });
    const patched = await patchIssue<{ comment: Json }>(engineer.headers, issue.id, {
      comment: "from the agent",
    });
    expect(patched.body.comment).toMatchObject({ authorAgentId: engineer.id, authorName: engineer.name });
    const list = await call<Json[]>("GET", `/api/issues/${issue.id}/comments`, { headers: owner.headers });
    expect(list.body.map((c) => c.authorName)).toEqual(["Ada Lovelace", engineer.name]);
    const one = await call<Json>("GET", `/api/issues/${issue.id}/comments/${posted.body.id}`, {
      headers: owner.headers,
    });
    expect(one.body.authorName).toBe("Ada Lovelace");
    const context = await call<{ comments: { latest: Json[] } }>(
      "GET",
      `/api/issues/${issue.id}/heartbeat-context`,
      {
        headers: engineer.headers,
      },
    );
    expect(context.body.comments.latest.map((c) => c.authorName)).toEqual(["Ada Lovelace", engineer.name]);
    // A renamed person shows under the new name: names are read, not copied.
    await rename(ada.userId, "Ada King");
    const again = await call<Json[]>("GET", `/api/issues/${issue.id}/comments`, { headers: owner.headers });
    expect(again.body[0]?.authorName).toBe("Ada King");
  });

  it("activity entries carry actorName for users and agents, null for the system", async () => {
    const { owner, company, engineer } = await named();
    const issue = await newIssue(owner.headers, company);
    await patchIssue(engineer.headers, issue.id, { comment: "on it" });
    await env.DB.prepare(
      `INSERT INTO activity_log (id, company_id, actor_type, actor_id, action, entity_type, entity_id, details, created_at)
       VALUES (?, ?, 'system', 'scheduler', 'issue.poked', 'issue', ?, '{}', ?)`,
    )
      .bind(crypto.randomUUID(), company.id, issue.id, Date.now() + 1000)
      .run();
    const log = await call<Json[]>("GET", `/api/companies/${company.id}/activity?entityId=${issue.id}`, {
      headers: owner.headers,
    });
    expect(log.status).toBe(200);
    const byAction = Object.fromEntries(log.body.map((e) => [String(e.action), e.actorName]));
    expect(byAction).toMatchObject({
      "issue.created": "Olive Owner",
      "issue.comment_added": engineer.name,
      "issue.poked": null,
    });
  });

  it("approvals carry requestedByName and decidedByName", async () => {
    const { owner, company, ceo } = await named();
    const created = await call<Json>("POST", `/api/companies/${company.id}/approvals`, {
      headers: ceo.headers,
      body: { type: "approve_ceo_strategy", payload: { plan: "Ship" } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ requestedByName: ceo.name, decidedByName: null });
    const approved = await call<Json>("POST", `/api/approvals/${created.body.id}/approve`, {
      headers: owner.headers,
      body: {},
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ decidedByUserId: owner.userId, decidedByName: "Olive Owner" });
    const note = await call<Json>("POST", `/api/approvals/${created.body.id}/comments`, {
      headers: owner.headers,
      body: { body: "Looks right" },
    });
    expect(note.body).toMatchObject({ authorUserId: owner.userId, authorName: "Olive Owner" });
    const notes = await call<Json[]>("GET", `/api/approvals/${created.body.id}/comments`, {
      headers: ceo.headers,
    });
    expect(notes.body.map((c) => c.authorName)).toEqual(["Olive Owner"]);
    const list = await call<Json[]>("GET", `/api/companies/${company.id}/approvals`, {
      headers: owner.headers,
    });
    expect(list.body.find((a) => a.id === created.body.id)).toMatchObject({
      requestedByName: ceo.name,
      decidedByName: "Olive Owner",
    });
  });

  it("runs name who invoked them; another company's agent id names nobody", async () => {
    const { owner, company, engineer } = await named();
    const invoked = await call<Json>("POST", `/api/agents/${engineer.id}/heartbeat/invoke`, {
      headers: owner.headers,
    });
    expect(invoked.status).toBe(202);
    expect(invoked.body).toMatchObject({ requestedByUserId: owner.userId, requestedByName: "Olive Owner" });
    const detail = await call<Json>("GET", `/api/heartbeat-runs/${invoked.body.id}`, {
      headers: owner.headers,
    });
    expect(detail.body.requestedByName).toBe("Olive Owner");
    const list = await call<Json[]>("GET", `/api/companies/${company.id}/heartbeat-runs`, {
      headers: owner.headers,
    });
    expect(list.body.find((r) => r.id === invoked.body.id)?.requestedByName).toBe("Olive Owner");

    // A comment row pointing at another tenant's agent (never written by the API) names nobody.
    const elsewhere = await seedCompany(await boardUser());
    const foreign = await seedAgent(elsewhere.id, { name: "Foreign Agent" });
    const issue = await newIssue(owner.headers, company);
    await env.DB.prepare(
      `INSERT INTO issue_comments (id, company_id, issue_id, author_agent_id, author_user_id, body, created_at, updated_at)
       VALUES (?, ?, ?, ?, NULL, 'x', ?, ?)`,
    )
      .bind(crypto.randomUUID(), company.id, issue.id, foreign.id, Date.now(), Date.now())
      .run();
    const comments = await call<Json[]>("GET", `/api/issues/${issue.id}/comments`, {
      headers: owner.headers,
    });
    expect(comments.body.map((c) => c.authorName)).toEqual([null]);
  });
});
