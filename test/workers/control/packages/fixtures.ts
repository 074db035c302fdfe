// A source company for the package suites, built through the API: an org with reporting lines and an
// adapter secret, goals, a project with goals and a workspace, issues with comments and documents, and a
// routine with schedule, webhook and api triggers.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call } from "../../helpers";
import {
  type BoardUser,
  boardUser,
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  seedCompany,
} from "../helpers";

export interface PackageTenant {
  board: BoardUser;
  member: BoardUser;
  company: SeededCompany;
  ceo: SeededAgent;
  cto: SeededAgent;
  engineer: SeededAgent;
}

async function created<T = { id: string }>(
  method: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<T> {
  const res = await call<T>(method, path, { headers, body });
  expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

export async function packageTenant(): Promise<PackageTenant> {
  const board = await boardUser();
  const member = await boardUser();
  const company = await seedCompany(board, {
    name: `Acme ${crypto.randomUUID().slice(0, 6)}`,
    members: [member],
  });
  const ceo = await seedAgent(company.id, { name: "Chief", role: "ceo" });
  const cto = await seedAgent(company.id, {
    name: "Tech Lead",
    role: "cto",
    reportsTo: ceo.id,
    adapterConfig: {
      cwd: "/work",
      model: "big-model",
      promptTemplate: "You lead engineering.\n",
      env: {
        OPENAI_API_KEY: "sk-live-abc123",
        LOG_LEVEL: "debug",
        DB: { type: "secret_ref", secretId: "s1" },
      },
    },
  });
  const engineer = await seedAgent(company.id, { name: "Builder", role: "engineer", reportsTo: cto.id });
  return { board, member, company, ceo, cto, engineer };
}

/** Goals, a project, issues (comments, documents, labels, a due date, a parent) and a routine with three triggers. */
export async function fillTenant(t: PackageTenant): Promise<void> {
  const h = t.board.headers;
  const cid = t.company.id;
  const grow = await created("POST", `/api/companies/${cid}/goals`, h, {
    title: "Grow revenue",
    level: "company",
  });
  const ship = await created("POST", `/api/companies/${cid}/goals`, h, {
    title: "Ship v1",
    parentId: grow.id,
    description: "The first release",
  });
  const project = await created("POST", `/api/companies/${cid}/projects`, h, {
    name: "Website",
    description: "Marketing site",
    goalIds: [ship.id, grow.id],
    leadAgentId: t.cto.id,
    workspace: { name: "main", cwd: "/srv/site", repoUrl: "https://example.test/site.git" },
  });
  const launch = await created("POST", `/api/companies/${cid}/labels`, h, { name: "launch" });
  const urgent = await created("POST", `/api/companies/${cid}/labels`, h, { name: "Urgent" });
  const parent = await created("POST", `/api/companies/${cid}/issues`, h, {
    title: "Launch the site",
    dueDate: "2026-12-24",
    labelIds: [urgent.id, launch.id],
    description: "Everything for launch",
    projectId: project.id,
    goalId: ship.id,
    assigneeAgentId: t.cto.id,
    priority: "high",
  });
  const child = await created("POST", `/api/companies/${cid}/issues`, h, {
    title: "Write the copy",
    parentId: parent.id,
    assigneeAgentId: t.engineer.id,
  });
  await created("POST", `/api/issues/${parent.id}/comments`, h, { body: "Board says: go" });
  await created("POST", `/api/issues/${parent.id}/comments`, t.cto.headers, { body: "On it" });
  await created("PUT", `/api/issues/${child.id}/documents/plan`, h, {
    format: "markdown",
    title: "Plan",
    body: "# Plan\n\n1. Draft\n",
  });
  await env.DB.prepare("UPDATE issues SET status = 'in_review' WHERE id = ?").bind(child.id).run();
  const routine = await created("POST", `/api/companies/${cid}/routines`, h, {
    title: "Weekly report",
    description: "Summarise the week",
    assigneeAgentId: t.engineer.id,
    projectId: project.id,
    concurrencyPolicy: "always_enqueue",
  });
  await created("POST", `/api/routines/${routine.id}/triggers`, h, {
    kind: "schedule",
    cronExpression: "0 9 * * 1-5",
    timezone: "Europe/Berlin",
    label: "weekdays",
  });
  await created("POST", `/api/routines/${routine.id}/triggers`, h, { kind: "webhook", replayWindowSec: 600 });
  await created("POST", `/api/routines/${routine.id}/triggers`, h, { kind: "api", enabled: false });
}

export interface ExportBody {
  rootPath: string;
  manifest: {
    counts: Record<string, number>;
    files: string[];
    envInputs: Array<{ agent: string; name: string }>;
  };
  files: Record<string, string>;
}

/** Row counts of the tables an import writes, for "nothing was written" checks. */
export async function tableCounts(): Promise<Record<string, number>> {
  const tables = [
    "companies",
    "company_memberships",
    "agents",
    "goals",
    "projects",
    "project_workspaces",
    "routines",
    "routine_triggers",
    "issues",
    "issue_comments",
    "issue_documents",
    "company_skills",
    "activity_log",
  ];
  const out: Record<string, number> = {};
  for (const table of tables) {
    const row = await env.DB.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>();
    out[table] = row?.n ?? 0;
  }
  return out;
}

/** A minimal hand-written package in the documented layout (docs/packages.md). */
export const HAND_WRITTEN: Record<string, string> = {
  "COMPANY.md": "---\nname: Tiny Co\nschema: agentcompanies/v1\n---\n\nWe make tiny things.\n",
  "agents/boss/AGENTS.md": "---\nname: Boss\nrole: ceo\n---\n\nYou run Tiny Co.\n",
  "agents/dev/AGENTS.md": "---\nname: Dev\n---\n\nYou write code.\n",
  "projects/app/PROJECT.md": "---\nname: App\n---\n\nThe app.\n",
  "tasks/first/TASK.md": "---\nname: First task\nassignee: dev\n---\n\nDo the first thing.\n",
  "tasks/first/documents/notes.md": "Some notes.\n",
  ".switchboard.yaml": [
    "schema: switchboard/v1",
    "agents:",
    "  dev:",
    "    role: engineer",
    "    reportsTo: boss",
    "goals:",
    "  launch:",
    "    title: Launch",
    "projects:",
    "  app:",
    "    goals: [launch]",
    "routines:",
    "  standup:",
    "    title: Daily standup",
    "    assignee: dev",
    "    project: app",
    "    triggers:",
    "      - kind: schedule",
    "        cronExpression: 0 9 * * *",
    "tasks:",
    "  first:",
    "    project: app",
    "    priority: high",
    "    comments:",
    "      - author: boss",
    "        body: Please start here.",
    "",
  ].join("\n"),
};
