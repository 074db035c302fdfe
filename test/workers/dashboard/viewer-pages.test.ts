// A viewer on the company pages that change things (org chart, approvals, routines, agents, projects,
// secrets, settings, import and export): every page reads, none shows a form or button that would
// write, and the owner still sees them all. The API refuses a viewer's write anyway (403).
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, submit, textOf } from "./helpers";

let owner: Session;
let viewer: Session;
let companyId: string;
let agentId: string;
let routineId: string;
let secretPath: string;

const hireBody = (name: string) => ({
  name,
  role: "engineer",
  adapterType: "coder_local",
  adapterConfig: { command: "node" },
});

beforeAll(async () => {
  owner = await createUser("OWNER");
  viewer = await createUser("OWNER");
  const company = await call<{ id: string }>("POST", "/api/companies", {
    headers: asSession(owner),
    body: { name: `Viewer Co ${crypto.randomUUID().slice(0, 6)}`, requireBoardApprovalForNewAgents: true },
  });
  companyId = company.body.id;
  const hires = `/api/companies/${companyId}/agent-hires`;
  const first = await call<{ agent: { id: string }; approval: { id: string } }>("POST", hires, {
    headers: asSession(owner),
    body: hireBody("Ada"),
  });
  agentId = first.body.agent.id;
  const approved = await call("POST", `/api/approvals/${first.body.approval.id}/approve`, {
    headers: asSession(owner),
    body: {},
  });
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  await call("POST", hires, { headers: asSession(owner), body: hireBody("Bob") }); // stays pending
  await call("PATCH", `/api/agents/${agentId}`, {
    headers: asSession(owner),
    body: { adapterConfig: { command: "node", args: ["x"] } },
  });
  await call("POST", `/api/agents/${agentId}/keys`, { headers: asSession(owner), body: { name: "ci" } });
  const project = await call<{ id: string }>("POST", `/api/companies/${companyId}/projects`, {
    headers: asSession(owner),
    body: { name: "Ledger" },
  });
  const routine = await call<{ id: string }>("POST", `/api/companies/${companyId}/routines`, {
    headers: asSession(owner),
    body: { title: "Daily sweep", assigneeAgentId: agentId, projectId: project.body.id },
  });
  expect(routine.status, JSON.stringify(routine.body)).toBe(201);
  routineId = routine.body.id;
  const secret = await submit(owner, `/companies/${companyId}/secrets`, {
    name: "Deploy token",
    key: "deploy_token",
    value: "s3cret",
  });
  expect(secret.status, textOf(secret.html)).toBe(303);
  const list = await browse(owner, secret.location ?? "");
  secretPath = list.html.match(/href="(\/companies\/[^"]+\/secrets\/[^"]+)"/)?.[1] ?? "";
  expect(secretPath).not.toBe("");
  const invite = await call<{ token: string }>("POST", `/api/companies/${companyId}/member-invites`, {
    headers: asSession(owner),
    body: { role: "viewer" },
  });
  await call("POST", `/api/member-invites/${invite.body.token}/accept`, { headers: asSession(viewer) });
});

/** Each page with what proves its writes are on screen for someone who may make them. */
const pages = () => [
  { path: `/companies/${companyId}/org`, writes: ['aria-label="Hire an agent"', `/agents/${agentId}/pause`] },
  { path: `/companies/${companyId}/approvals`, writes: ["/decide"] },
  {
    path: `/companies/${companyId}/routines`,
    writes: ['aria-label="New routine"', `/routines/${routineId}/run`],
  },
  {
    path: `/agents/${agentId}`,
    writes: [
      'aria-label="Configuration"',
      'aria-label="Budget"',
      "/rollback",
      "/revoke",
      'aria-label="New key"',
    ],
  },
  { path: `/companies/${companyId}/projects`, writes: ['aria-label="New project"', 'aria-label="New goal"'] },
  { path: `/companies/${companyId}/secrets`, writes: ['aria-label="New secret"'] },
  { path: secretPath, writes: ['aria-label="Rotate"', 'aria-label="Name and description"'] },
  { path: `/companies/${companyId}/settings`, writes: ['aria-label="Company settings"'] },
  {
    path: `/companies/${companyId}/package`,
    writes: [`action="/companies/${companyId}/package/import`],
  },
];

describe("company pages", () => {
  it("show the owner every form and button that writes", async () => {
    for (const { path, writes } of pages()) {
      const page = await browse(owner, path);
      expect(page.status, path).toBe(200);
      for (const write of writes) expect(page.html, `${path} ${write}`).toContain(write);
    }
  });

  it("show a viewer none of them, with a note saying why", async () => {
    for (const { path, writes } of pages()) {
      const page = await browse(viewer, path);
      expect(page.status, path).toBe(200);
      for (const write of writes) expect(page.html, `${path} ${write}`).not.toContain(write);
      // The only POSTs left: the layout's Sign out, and Export (it writes nothing; viewers may).
      const posts = page.html.match(/<form method="post" action="[^"]*"/g) ?? [];
      for (const post of posts) expect(post, path).toMatch(/action="(\/logout|[^"]*\/package\/export)"/);
    }
    expect(textOf((await browse(viewer, `/companies/${companyId}/org`)).html)).toContain(
      "You are a viewer of this company",
    );
    expect(textOf((await browse(viewer, `/agents/${agentId}`)).html)).toContain('"args": [');
  });

  it("refuse a viewer's forged writes with the API's 403", async () => {
    expect((await submit(viewer, `/agents/${agentId}/pause`)).status).toBe(403);
    expect((await submit(viewer, `/routines/${routineId}/run`)).status).toBe(403);
    expect((await submit(viewer, `/companies/${companyId}/projects`, { name: "Sneaky" })).status).toBe(403);
    const agent = await call<{ status: string }>("GET", `/api/agents/${agentId}`, {
      headers: asSession(owner),
    });
    expect(agent.body.status).toBe("idle");
  });
});
