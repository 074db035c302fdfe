// Roles on every control-plane write: the viewer walk over the OpenAPI document, what members may not
// do, and the access checks' own refusal.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { canAccessCompany, companyForActor, VIEWER_REFUSAL } from "../../../../workers/control/shared";
import type { Actor } from "../../../../workers/core/actor";
import { database } from "../../../../workers/db/client";
import { call } from "../../helpers";
import { seedIssue } from "../helpers";
import { seedEveryResource, seedTeam } from "./fixtures";

type OpenApi = { paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>> };

/** Writes a viewer may make, or that name no company: each with why. Everything else must be 403. */
const NOT_REFUSED: Record<string, string> = {
  "POST /api/companies": "creates a new company, of which the caller becomes the owner",
  "POST /api/runners": "a person's own runner; adding companies to it needs ownership",
  "DELETE /api/runners/{runnerId}": "a person's own runner",
  "POST /api/member-invites/{token}/accept": "joining: the caller is not a member yet",
  "POST /api/issues/{issueId}/read": "the viewer's own read mark",
  "POST /api/notifications/{notificationId}/read": "the viewer's own notification",
  "POST /api/notifications/read-all": "the viewer's own notifications",
  "DELETE /api/companies/{companyId}/members/{userId}": "leaving (removing others needs ownership)",
  "POST /api/companies/{companyId}/exports": "renders the company, changes nothing",
  "POST /api/companies/{companyId}/exports/preview": "renders the company, changes nothing",
  "PUT /api/companies/{companyId}/line/members/me": "the viewer's own number on the line",
  "POST /api/companies/{companyId}/line/members/me/verify": "the viewer's own number on the line",
  "PATCH /api/companies/{companyId}/line/members/me": "the viewer's own line preferences",
  "DELETE /api/companies/{companyId}/line/members/me": "the viewer's own number on the line",
};

const WRITES = new Set(["post", "put", "patch", "delete"]);

/** Every mutating control-plane route in the API's own OpenAPI document (agent keys mark the control plane). */
async function controlWrites(): Promise<Array<{ method: string; path: string }>> {
  const doc = await call<OpenApi>("GET", "/api/openapi.json");
  const routes: Array<{ method: string; path: string }> = [];
  for (const [path, operations] of Object.entries(doc.body.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const control = operation.security?.some((scheme) => "AgentKey" in scheme) ?? false;
      if (WRITES.has(method) && control) routes.push({ method: method.toUpperCase(), path });
    }
  }
  return routes;
}

const activityCount = async (companyId: string) =>
  (
    await env.DB.prepare("SELECT COUNT(*) AS n FROM activity_log WHERE company_id = ?")
      .bind(companyId)
      .first<{ n: number }>()
  )?.n ?? 0;

describe("a viewer", () => {
  it("gets 403 on every mutating control-plane route in the OpenAPI document, and nothing changes", async () => {
    const { owner, company, viewer } = await seedTeam();
    const ids = await seedEveryResource(owner, company);
    const routes = (await controlWrites()).filter(
      (route) => !(`${route.method} ${route.path}` in NOT_REFUSED),
    );
    expect(routes.length).toBeGreaterThan(60);
    const before = await activityCount(company.id);
    const answers: string[] = [];
    for (const route of routes) {
      const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? crypto.randomUUID());
      const res = await call<{ error: string; details?: unknown }>(route.method, path, {
        headers: viewer.headers,
        body: {},
      });
      const refused = res.status === 403 && JSON.stringify(res.body).includes(VIEWER_REFUSAL);
      if (!refused) answers.push(`${route.method} ${route.path} → ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(answers).toEqual([]);
    expect(await activityCount(company.id)).toBe(before);
  });

  it("the same writes from a member are not refused as a viewer's (the walk above can fail)", async () => {
    const { company, member } = await seedTeam();
    const issue = await seedIssue(company);
    const patched = await call("PATCH", `/api/issues/${issue.id}`, {
      headers: member.headers,
      body: { title: "Renamed by a member" },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const comment = await call("POST", `/api/issues/${issue.id}/comments`, {
      headers: member.headers,
      body: { body: "A member comments" },
    });
    expect(comment.status, JSON.stringify(comment.body)).toBe(201);
  });

  it("reads everything it is shown, marks issues read and may leave", async () => {
    const { company, viewer } = await seedTeam();
    const issue = await seedIssue(company);
    for (const path of [
      `/api/companies/${company.id}`,
      `/api/companies/${company.id}/issues`,
      `/api/issues/${issue.id}`,
      `/api/issues/${issue.id}/comments`,
      `/api/companies/${company.id}/members`,
    ])
      expect((await call("GET", path, { headers: viewer.headers })).status, path).toBe(200);
    const read = await call("POST", `/api/issues/${issue.id}/read`, { headers: viewer.headers });
    expect(read.status, JSON.stringify(read.body)).toBeLessThan(300);
    const left = await call("DELETE", `/api/companies/${company.id}/members/${viewer.userId}`, {
      headers: viewer.headers,
    });
    expect(left.status).toBe(204);
    expect((await call("GET", `/api/companies/${company.id}`, { headers: viewer.headers })).status).toBe(404);
  });

  it("is refused by the access checks themselves, not only by the gate in front of the routes", async () => {
    const { company, viewer } = await seedTeam();
    const db = database(env.DB);
    const user = { id: viewer.userId } as Extract<Actor, { type: "board" }>["user"];
    const writing: Actor = { type: "board", userId: viewer.userId, user, mutating: true };
    const reading: Actor = { ...writing, mutating: false };
    await expect(companyForActor(db, writing, company.id)).rejects.toMatchObject({ status: 403 });
    await expect(canAccessCompany(db, writing, company.id)).rejects.toMatchObject({ status: 403 });
    expect((await companyForActor(db, reading, company.id)).id).toBe(company.id);
    expect(await canAccessCompany(db, reading, company.id)).toBe(true);
  });
});

describe("a member", () => {
  it("is refused the owner-only operations (403) and changes nothing", async () => {
    const { owner, company, member } = await seedTeam();
    const c = `/api/companies/${company.id}`;
    const attempts: Array<[string, string, unknown?]> = [
      ["PATCH", c, { name: "Taken over" }],
      ["POST", `${c}/archive`],
      ["PATCH", `${c}/members/${owner.userId}`, { role: "member" }],
      ["DELETE", `${c}/members/${owner.userId}`],
      ["POST", `${c}/member-invites`, { role: "owner" }],
      ["GET", `${c}/member-invites`],
      ["POST", `${c}/external-agent/invite-prompt`, {}],
    ];
    const before = await activityCount(company.id);
    for (const [method, path, body] of attempts) {
      const res = await call(method, path, { headers: member.headers, body });
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(403);
    }
    expect(await activityCount(company.id)).toBe(before);
    const company_ = await call<{ name: string; status: string }>("GET", c, { headers: owner.headers });
    expect(company_.body).toMatchObject({ name: company.name, status: "active" });
  });
});
