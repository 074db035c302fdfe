import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { issueFeedPath } from "../issues/model-views";
import { transcriptOf } from "../runs/transcript";
import { logOf, RunEntry } from "../runs/view";
import {
  ActionAlert,
  type Agent,
  agentNamesOf,
  apiCompanyPath,
  type BoardContext,
  companyNav,
  failedForm,
  loadAgents,
  loadCompany,
  optionalNumber,
  optionalText,
} from "../ui/board-shared";
import { type ActionRefusal, blankForm, type FormState, LiveRegion } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { loadMyRole, mayChange, READ_ONLY_NOTE } from "../ui/member-shared";
import { failureStatus, redirectWithFlash, render } from "../ui/render";
import { parseJsonField, prettyJson, ShownOnce } from "../ui/shown-once";
import {
  type AgentDetail,
  AgentFacts,
  type AgentKey,
  AgentRemoval,
  AgentsTable,
  BUDGET_FIELDS,
  BudgetForm,
  CONFIG_FIELDS,
  ConfigForm,
  type ConfigRevision,
  KEY_FIELDS,
  KeyList,
  NewKeyForm,
  RevisionList,
  type Run,
  RunList,
} from "./views";

// ---------------------------------------------------------------------------------------------
// GET /companies/:id/agents, GET /agents/:id (status, configuration with revisions and rollback,
// keys, budget, recent runs), GET /runs/:id (a run's transcript), and the forms of the agent page.
// ---------------------------------------------------------------------------------------------

export const agentPages = new Hono<DashboardEnv>();

const RECENT_RUNS = 10;
export const agentApiPath = (agentId: string) => `/api/agents/${encodeURIComponent(agentId)}`;

agentPages.get("/companies/:companyId/agents", async (c) => {
  const company = await loadCompany(c, c.req.param("companyId"));
  const agents = await loadAgents(c, company.id);
  return render(c, {
    title: `${company.name}: agents`,
    section: "companies",
    company: companyNav(company, "agents"),
    children: (
      <section aria-labelledby="agents-list">
        <h2 id="agents-list">Agents</h2>
        <AgentsTable agents={agents} />
        <p class="muted">
          Hire agents and pause or resume them on the{" "}
          <a href={`/companies/${company.id}/org`}>reporting tree</a>.
        </p>
      </section>
    ),
  });
});

interface AgentView {
  config?: FormState;
  budget?: FormState;
  key?: FormState;
  /** A key just created: its token, in this one response only. */
  createdToken?: string;
  alert?: string;
  /** A refused Terminate or Delete, next to its button. */
  refusal?: ActionRefusal;
  status?: ContentfulStatusCode;
}

const configFormOf = (agent: AgentDetail): FormState =>
  blankForm({
    adapterType: agent.adapterType,
    adapterConfig: prettyJson(agent.adapterConfig),
    runtimeConfig: prettyJson(agent.runtimeConfig),
  });

export async function showAgent(c: BoardContext, agentId: string, view: AgentView = {}) {
  const path = agentApiPath(agentId);
  const agent = await c.var.api.get<AgentDetail>(path);
  const [company, agents, revisions, keys, runs, role] = await Promise.all([
    loadCompany(c, agent.companyId),
    loadAgents(c, agent.companyId),
    c.var.api.get<ConfigRevision[]>(`${path}/config-revisions`),
    c.var.api.get<AgentKey[]>(`${path}/keys`),
    c.var.api.get<Run[]>(
      `${apiCompanyPath(agent.companyId)}/heartbeat-runs?agentId=${agent.id}&limit=${RECENT_RUNS}`,
    ),
    loadMyRole(c, agent.companyId),
  ]);
  const csrf = c.var.csrf;
  const editable = mayChange(role);
  const terminated = agent.status === "terminated";
  return render(
    c,
    {
      title: `${agent.name}`,
      section: "companies",
      company: companyNav(company, "agents"),
      children: (
        <>
          <ActionAlert message={view.alert} />
          {view.createdToken && (
            <ShownOnce
              id="new-agent-key"
              heading="The new agent key"
              label="Agent key"
              value={view.createdToken}
              note="The agent sends it as Authorization: Bearer <key>."
            />
          )}
          <AgentFacts agent={agent} />
          <section aria-labelledby="agent-runs">
            <h2 id="agent-runs">Recent runs</h2>
            <RunList runs={runs} />
          </section>
          {editable ? (
            <div class="grid">
              <section class="panel" aria-labelledby="agent-config">
                <h2 id="agent-config">Configuration</h2>
                {terminated ? (
                  <p class="muted">A terminated agent's configuration cannot change.</p>
                ) : (
                  <ConfigForm agentId={agent.id} csrf={csrf} form={view.config ?? configFormOf(agent)} />
                )}
              </section>
              <section class="panel" aria-labelledby="agent-budget">
                <h2 id="agent-budget">Budget</h2>
                <BudgetForm
                  agentId={agent.id}
                  csrf={csrf}
                  form={view.budget ?? blankForm({ budgetMonthlyCents: String(agent.budgetMonthlyCents) })}
                />
              </section>
            </div>
          ) : (
            <section class="panel" aria-labelledby="agent-config">
              <h2 id="agent-config">Configuration</h2>
              <p class="muted">{READ_ONLY_NOTE}</p>
              <pre>{configFormOf(agent).values.adapterConfig}</pre>
            </section>
          )}
          <section aria-labelledby="agent-revisions">
            <h2 id="agent-revisions">Configuration history</h2>
            <RevisionList
              agentId={agent.id}
              revisions={revisions}
              names={agentNamesOf(agents)}
              viewerId={c.var.viewer.id}
              csrf={editable ? csrf : null}
              terminated={terminated}
            />
          </section>
          <section aria-labelledby="agent-keys">
            <h2 id="agent-keys">API keys</h2>
            <KeyList agentId={agent.id} keys={keys} csrf={editable ? csrf : null} />
            {editable && !terminated && agent.status !== "pending_approval" && (
              <NewKeyForm agentId={agent.id} csrf={csrf} form={view.key ?? blankForm()} />
            )}
          </section>
          {editable && agent.status !== "pending_approval" && (
            <AgentRemoval agent={agent} csrf={csrf} refusal={view.refusal} />
          )}
        </>
      ),
    },
    view.status ?? 200,
  );
}

agentPages.get("/agents/:agentId", (c) => showAgent(c, c.req.param("agentId")));

agentPages.post("/agents/:agentId/config", async (c) => {
  const agentId = c.req.param("agentId");
  const values = c.var.form;
  const adapterConfig = parseJsonField(values.adapterConfig);
  const runtimeConfig = parseJsonField(values.runtimeConfig);
  if (!adapterConfig.ok || !runtimeConfig.ok) {
    const errors: Record<string, string> = {};
    if (!adapterConfig.ok) errors.adapterConfig = adapterConfig.message;
    if (!runtimeConfig.ok) errors.runtimeConfig = runtimeConfig.message;
    return showAgent(c, agentId, { config: { values, errors }, status: 400 });
  }
  const result = await c.var.api.send<Agent>("PATCH", agentApiPath(agentId), {
    adapterType: optionalText(values.adapterType),
    adapterConfig: adapterConfig.value ?? {},
    runtimeConfig: runtimeConfig.value ?? {},
  });
  if (!result.ok)
    return showAgent(c, agentId, {
      config: failedForm(values, result, CONFIG_FIELDS),
      status: failureStatus(result),
    });
  return redirectWithFlash(c, `/agents/${result.data.id}`, "Configuration saved");
});

agentPages.post("/agents/:agentId/budget", async (c) => {
  const agentId = c.req.param("agentId");
  const values = c.var.form;
  const result = await c.var.api.send<Agent>("PATCH", agentApiPath(agentId), {
    budgetMonthlyCents: optionalNumber(values.budgetMonthlyCents) ?? 0,
  });
  if (!result.ok)
    return showAgent(c, agentId, {
      budget: failedForm(values, result, BUDGET_FIELDS),
      status: failureStatus(result),
    });
  return redirectWithFlash(c, `/agents/${result.data.id}`, "Budget saved");
});

agentPages.post("/agents/:agentId/config-revisions/:revisionId/rollback", async (c) => {
  const agentId = c.req.param("agentId");
  const path = `${agentApiPath(agentId)}/config-revisions/${encodeURIComponent(c.req.param("revisionId"))}/rollback`;
  const result = await c.var.api.send<Agent>("POST", path);
  if (!result.ok) return showAgent(c, agentId, { alert: result.error, status: failureStatus(result) });
  return redirectWithFlash(c, `/agents/${result.data.id}`, "Configuration restored");
});

/** Answered with the page itself (200), so the token never sits in a URL, a redirect or a cookie. */
agentPages.post("/agents/:agentId/keys", async (c) => {
  const agentId = c.req.param("agentId");
  const values = c.var.form;
  const name = optionalText(values.name);
  const result = await c.var.api.send<AgentKey & { token: string }>(
    "POST",
    `${agentApiPath(agentId)}/keys`,
    name === undefined ? {} : { name },
  );
  if (!result.ok)
    return showAgent(c, agentId, {
      key: failedForm(values, result, KEY_FIELDS),
      status: failureStatus(result),
    });
  return showAgent(c, agentId, { createdToken: result.data.token });
});

agentPages.post("/agents/:agentId/keys/:keyId/revoke", async (c) => {
  const agentId = c.req.param("agentId");
  const path = `${agentApiPath(agentId)}/keys/${encodeURIComponent(c.req.param("keyId"))}`;
  const result = await c.var.api.send<AgentKey>("DELETE", path);
  if (!result.ok) return showAgent(c, agentId, { alert: result.error, status: failureStatus(result) });
  return redirectWithFlash(c, `/agents/${agentId}`, `Key ${result.data.name} revoked`);
});

/**
 * The socket that announces this run's changes (runs/live.ts): its issue's feed, or its company's for
 * a run woken for no issue, each asked for this run's events only.
 */
const runFeedPath = (run: Run) =>
  `${run.issueId ? issueFeedPath(run.issueId) : `${apiCompanyPath(run.companyId)}/events`}?runId=${encodeURIComponent(run.id)}`;

agentPages.get("/runs/:runId", async (c) => {
  const run = await c.var.api.get<Run>(`/api/heartbeat-runs/${encodeURIComponent(c.req.param("runId"))}`);
  const [company, agents, log, events] = await Promise.all([
    loadCompany(c, run.companyId),
    loadAgents(c, run.companyId),
    logOf(c, run),
    transcriptOf(c, run.id),
  ]);
  const names = agentNamesOf(agents);
  const agentName = names.get(run.agentId) ?? "An agent";
  return render(c, {
    title: `Run of ${agentName}`,
    section: "companies",
    company: companyNav(company, "agents"),
    children: (
      <>
        <p>
          <a href={`/agents/${run.agentId}`}>Back to {agentName}</a>
          {run.issueId && (
            <>
              {" · "}
              <a href={`/issues/${run.issueId}`}>Open the issue it worked on</a>
            </>
          )}
        </p>
        <LiveRegion id="run-live" feed={runFeedPath(run)}>
          <RunEntry run={run} log={log} events={events} names={names} />
        </LiveRegion>
      </>
    ),
  });
});
