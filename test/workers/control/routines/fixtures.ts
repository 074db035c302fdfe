// Fixtures shared by the routine suites: a tenant with a project, routines and triggers created
// through the API, and HMAC signing as an external webhook sender would do it.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { hmacSha256, toHex } from "../../../../workers/auth/crypto";
import { call } from "../../helpers";
import {
  type BoardUser,
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  boardUser as seedBoard,
  seedCompany,
} from "../helpers";

export interface RoutineTenant {
  board: BoardUser;
  company: SeededCompany;
  agent: SeededAgent;
  projectId: string;
}

export async function seedProject(board: BoardUser, companyId: string): Promise<string> {
  const res = await call<{ id: string }>("POST", `/api/companies/${companyId}/projects`, {
    headers: board.headers,
    body: { name: `Project ${crypto.randomUUID().slice(0, 6)}` },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

export async function routineTenant(): Promise<RoutineTenant> {
  const board = await seedBoard();
  const company = await seedCompany(board);
  const agent = await seedAgent(company.id);
  return { board, company, agent, projectId: await seedProject(board, company.id) };
}

export interface RoutineBody {
  id: string;
  status: string;
  assigneeAgentId: string;
  concurrencyPolicy: string;
  catchUpPolicy: string;
  triggers: TriggerBody[];
}

export interface TriggerBody {
  id: string;
  kind: string;
  enabled: boolean;
  nextRunAt: string | null;
  publicId: string | null;
  cronExpression: string | null;
  timezone: string | null;
}

export interface RunBody {
  id: string;
  status: string;
  source: string;
  issueId: string | null;
  heartbeatRunId: string | null;
  scheduledFor: string | null;
  payload: unknown;
}

export async function createRoutine(
  tenant: RoutineTenant,
  fields: Record<string, unknown> = {},
  headers = tenant.board.headers,
): Promise<RoutineBody> {
  const res = await call<RoutineBody>("POST", `/api/companies/${tenant.company.id}/routines`, {
    headers,
    body: { title: "Daily triage", assigneeAgentId: tenant.agent.id, projectId: tenant.projectId, ...fields },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

export async function addTrigger(tenant: RoutineTenant, routineId: string, body: Record<string, unknown>) {
  const res = await call<{
    trigger: TriggerBody;
    secretMaterial: { webhookUrl: string; webhookSecret: string } | null;
  }>("POST", `/api/routines/${routineId}/triggers`, { headers: tenant.board.headers, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

export async function runRoutine(tenant: RoutineTenant, routineId: string, body?: unknown) {
  return call<RunBody & { error?: string }>("POST", `/api/routines/${routineId}/run`, {
    headers: tenant.board.headers,
    ...(body === undefined ? {} : { body }),
  });
}

export const signature = async (secret: string, timestamp: string, body: string) =>
  `sha256=${toHex(await hmacSha256(secret, `${timestamp}.${body}`))}`;

/** A signed fire, as an external system sends it (seconds timestamp unless given). */
export async function fire(
  publicId: string,
  secret: string,
  body = '{"event":"ping"}',
  timestamp = String(Math.floor(Date.now() / 1000)),
) {
  return call<RunBody & { error?: string }>("POST", `/api/routine-triggers/public/${publicId}/fire`, {
    rawBody: body,
    headers: {
      "content-type": "application/json",
      "X-Platform-Timestamp": timestamp,
      "X-Platform-Signature": await signature(secret, timestamp, body),
    },
  });
}

export const executionIssues = (routineId: string) =>
  env.DB.prepare(
    "SELECT id, identifier, status, assignee_agent_id, project_id, title FROM issues WHERE origin_routine_id = ? ORDER BY created_at",
  )
    .bind(routineId)
    .all<{
      id: string;
      identifier: string;
      status: string;
      assignee_agent_id: string;
      project_id: string;
      title: string;
    }>()
    .then((r) => r.results);

export const heartbeatRunsOf = (agentId: string) =>
  env.DB.prepare(
    "SELECT id, status, issue_id, invocation_source, wake_reason, routine_run_id, coalesced_count FROM heartbeat_runs WHERE agent_id = ? ORDER BY created_at",
  )
    .bind(agentId)
    .all<{
      id: string;
      status: string;
      issue_id: string;
      invocation_source: string;
      wake_reason: string;
      routine_run_id: string;
      coalesced_count: number;
    }>()
    .then((r) => r.results);

export const routineRunsOf = (routineId: string) =>
  env.DB.prepare(
    "SELECT id, status, source, issue_id, scheduled_for FROM routine_runs WHERE routine_id = ? ORDER BY scheduled_for, created_at",
  )
    .bind(routineId)
    .all<{
      id: string;
      status: string;
      source: string;
      issue_id: string | null;
      scheduled_for: number | null;
    }>()
    .then((r) => r.results);
