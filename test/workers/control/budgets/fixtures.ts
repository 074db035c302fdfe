// Shared by the budget suites: projects, cost events, budgets and incidents through the API.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call } from "../../helpers";

export type Json = Record<string, unknown>;
export type Incident = {
  id: string;
  scope: string;
  scopeId: string;
  threshold: string;
  status: string;
  resolution: string | null;
  spentCents: number;
  amountCents: number;
};
export type Budget = {
  scope: string;
  scopeId: string;
  scopeName: string;
  window: string;
  amountCents: number;
  spentCents: number;
  status: string;
};

export const settleRuns = () =>
  env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();

export async function project(companyId: string, headers: Record<string, string>, name = "Launch") {
  const res = await call<{ id: string }>("POST", `/api/companies/${companyId}/projects`, {
    headers,
    body: { name },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

export const inProject = (issueId: string, projectId: string) =>
  env.DB.prepare("UPDATE issues SET project_id = ? WHERE id = ?").bind(projectId, issueId).run();

export async function spend(
  companyId: string,
  headers: Record<string, string>,
  body: {
    agentId: string;
    costCents: number;
    issueId?: string;
    projectId?: string;
    model?: string;
    provider?: string;
    occurredAt?: string;
  },
) {
  const res = await call("POST", `/api/companies/${companyId}/cost-events`, {
    headers,
    body: { provider: "openai", occurredAt: new Date().toISOString(), ...body },
  });
  expect(res.status).toBe(201);
}

export const putBudget = (companyId: string, headers: Record<string, string>, body: Json) =>
  call<Budget & Json>("PUT", `/api/companies/${companyId}/budgets`, { headers, body });

export const incidents = async (companyId: string, headers: Record<string, string>, status = "") =>
  (
    await call<Incident[]>(
      "GET",
      `/api/companies/${companyId}/budget-incidents${status ? `?status=${status}` : ""}`,
      { headers },
    )
  ).body;

export const runRow = (id: string) =>
  env.DB.prepare("SELECT status, error_reason FROM heartbeat_runs WHERE id = ?")
    .bind(id)
    .first<{ status: string; error_reason: string | null }>();

export const invoke = (headers: Record<string, string>, agentId: string, issueId?: string) =>
  call<Json & { id: string; status: string; details?: { errorReason: string } }>(
    "POST",
    `/api/agents/${agentId}/heartbeat/invoke`,
    { headers, ...(issueId ? { body: { issueId } } : {}) },
  );
