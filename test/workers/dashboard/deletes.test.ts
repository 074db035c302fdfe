// Delete on the dashboard, in workerd through its URLs: issues (issue page), agents (terminated first,
// agent page), projects and goals (projects page) and routines (routines page). Each: the button behind
// a confirm, success (303, gone from the API), and a refusal by the API's rules shown next to its button
// (an agent with open work, a project routines use) or, for a viewer's forged post, above the page (403),
// with nothing deleted.
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, fieldError, type PageResponse, submit, textOf } from "./helpers";

let owner: Session;
let viewer: Session;
let companyId: string;

const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
  call<T>(method, path, { headers: asSession(owner), ...(body === undefined ? {} : { body }) });

async function created<T extends { id: string }>(path: string, body: unknown): Promise<T> {
  const res = await api<T>("POST", path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const exists = async (path: string) => (await api("GET", path)).status === 200;

const alertOf = (page: PageResponse) =>
  textOf(page.html.match(/<p class="alert" role="alert">([\s\S]*?)<\/p>/)?.[1] ?? "");

beforeAll(async () => {
  owner = await createUser("OWNER");
  viewer = await createUser("OWNER");
  companyId = (
    await created<{ id: string }>("/api/companies", {
      name: `Deletes Co ${crypto.randomUUID().slice(0, 6)}`,
      requireBoardApprovalForNewAgents: false,
    })
  ).id;
  const invite = await created<{ id: string; token: string }>(`/api/companies/${companyId}/member-invites`, {
    role: "viewer",
  });
  const joined = await call("POST", `/api/member-invites/${invite.token}/accept`, {
    headers: asSession(viewer),
  });
  expect(joined.status).toBeLessThan(300);
});

async function hire(name: string): Promise<{ id: string }> {
  const res = await api<{ agent: { id: string } }>("POST", `/api/companies/${companyId}/agent-hires`, {
    name,
    role: "engineer",
    adapterType: "process",
    adapterConfig: { command: "node" },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.agent;
}

describe("deleting an issue", () => {
  it("from its page, behind a confirm, back to the board; a viewer's forged delete is the API's 403", async () => {
    const issue = await created<{ id: string; identifier: string }>(`/api/companies/${companyId}/issues`, {
      title: "Short-lived",
    });
    const page = await browse(owner, `/issues/${issue.id}`);
    expect(page.html).toContain(`action="/issues/${issue.id}/delete"`);
    expect(page.html).toMatch(/data-confirm="Delete [A-Z]+-\d+ with its comments/);
    expect((await browse(viewer, `/issues/${issue.id}`)).html).not.toContain(`/issues/${issue.id}/delete`);

    const forged = await submit(viewer, `/issues/${issue.id}/delete`);
    expect(forged.status).toBe(403);
    expect(alertOf(forged)).toContain("Viewers");
    expect(await exists(`/api/issues/${issue.id}`)).toBe(true);

    const deleted = await submit(owner, `/issues/${issue.id}/delete`);
    expect(deleted.status).toBe(303);
    expect(deleted.location).toBe(`/companies/${companyId}/issues`);
    expect(await exists(`/api/issues/${issue.id}`)).toBe(false);
  });
});

describe("deleting an agent", () => {
  it("is offered once it is terminated, refused while it has open work, then deletes it", async () => {
    const agent = await hire("Temp");
    const name = `remove-${agent.id}`;
    const live = await browse(owner, `/agents/${agent.id}`);
    expect(live.html).toContain(`action="/agents/${agent.id}/terminate"`);
    expect(live.html).not.toContain(`action="/agents/${agent.id}/delete"`);
    // The API's order holds even for a forged post: a live agent is not deleted.
    const early = await submit(owner, `/agents/${agent.id}/delete`);
    expect(early.status).toBe(409);
    expect(fieldError(early.html, name)).toMatch(/terminate/i);

    const open = await created<{ id: string; identifier: string }>(`/api/companies/${companyId}/issues`, {
      title: "Still assigned",
      assigneeAgentId: agent.id,
    });
    const terminated = await submit(owner, `/agents/${agent.id}/terminate`);
    expect(terminated.status).toBe(303);
    expect((await api<{ status: string }>("GET", `/api/agents/${agent.id}`)).body.status).toBe("terminated");
    const page = await browse(owner, `/agents/${agent.id}`);
    expect(page.html).toContain(`action="/agents/${agent.id}/delete"`);

    const busy = await submit(owner, `/agents/${agent.id}/delete`);
    expect(busy.status).toBe(409);
    expect(fieldError(busy.html, name)).toBe(
      `Reassign, cancel or delete the agent's work first: open issues ${open.identifier}`,
    );
    expect(await exists(`/api/agents/${agent.id}`)).toBe(true);

    expect((await api("PATCH", `/api/issues/${open.id}`, { status: "cancelled" })).status).toBe(200);
    const deleted = await submit(owner, `/agents/${agent.id}/delete`);
    expect(deleted.status).toBe(303);
    expect(deleted.location).toBe(`/companies/${companyId}/agents`);
    expect(await exists(`/api/agents/${agent.id}`)).toBe(false);
  });
});

describe("deleting projects, goals and routines", () => {
  it("a project a routine uses is refused next to its button; the routine goes first, then the project", async () => {
    const agent = await hire("Scheduler");
    const project = await created<{ id: string }>(`/api/companies/${companyId}/projects`, { name: "Ops" });
    const routine = await created<{ id: string }>(`/api/companies/${companyId}/routines`, {
      title: "Nightly sweep",
      assigneeAgentId: agent.id,
      projectId: project.id,
    });
    const projects = await browse(owner, `/companies/${companyId}/projects`);
    expect(projects.html).toContain(`action="/projects/${project.id}/delete"`);

    const refused = await submit(owner, `/projects/${project.id}/delete`);
    expect(refused.status).toBe(409);
    expect(fieldError(refused.html, `delete-${project.id}`)).toBe(
      'Routines still use this project, move or delete them first: "Nightly sweep"',
    );
    expect(await exists(`/api/projects/${project.id}`)).toBe(true);

    const forged = await submit(viewer, `/routines/${routine.id}/delete`);
    expect(forged.status).toBe(403);
    expect(await exists(`/api/routines/${routine.id}`)).toBe(true);
    const routines = await browse(owner, `/companies/${companyId}/routines`);
    expect(routines.html).toContain(`action="/routines/${routine.id}/delete"`);
    const gone = await submit(owner, `/routines/${routine.id}/delete`);
    expect(gone.status).toBe(303);
    expect(gone.location).toBe(`/companies/${companyId}/routines`);
    expect(await exists(`/api/routines/${routine.id}`)).toBe(false);

    const deleted = await submit(owner, `/projects/${project.id}/delete`);
    expect(deleted.status).toBe(303);
    expect(await exists(`/api/projects/${project.id}`)).toBe(false);
  });

  it("a goal is deleted from the tree; a viewer sees no button and their forged delete is refused", async () => {
    const goal = await created<{ id: string }>(`/api/companies/${companyId}/goals`, { title: "Grow" });
    expect((await browse(owner, `/companies/${companyId}/projects`)).html).toContain(
      `action="/goals/${goal.id}/delete"`,
    );
    const seen = await browse(viewer, `/companies/${companyId}/projects`);
    expect(seen.html).not.toContain("/delete");

    const forged = await submit(viewer, `/goals/${goal.id}/delete`);
    expect(forged.status).toBe(403);
    expect(alertOf(forged)).toContain("Viewers");
    expect(await exists(`/api/goals/${goal.id}`)).toBe(true);

    const deleted = await submit(owner, `/goals/${goal.id}/delete`);
    expect(deleted.status).toBe(303);
    expect(deleted.location).toBe(`/companies/${companyId}/projects`);
    expect(await exists(`/api/goals/${goal.id}`)).toBe(false);
  });
});
