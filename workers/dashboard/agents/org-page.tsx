import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { HireResultSchema, OrgNodeSchema } from "../../control/agents";
import { ADAPTER_TYPES, AGENT_ROLES } from "../../db/schema";
import {
  ActionAlert,
  type Agent,
  apiCompanyPath,
  type Company,
  companyNav,
  failedForm,
  loadAgents,
  loadCompany,
  optionalNumber,
  optionalText,
} from "../ui/board-shared";
import {
  blankForm,
  EmptyState,
  Field,
  Form,
  type FormState,
  SelectField,
  StatusBadge,
  TextAreaField,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { loadMyRole, mayChange, READ_ONLY_NOTE } from "../ui/member-shared";
import { failureStatus, redirectWithFlash, render } from "../ui/render";

type HireResult = z.infer<typeof HireResultSchema>;
/** The API types `reports` loosely (a recursive response type); each entry is an OrgNode again. */
type OrgNode = Omit<z.infer<typeof OrgNodeSchema>, "reports"> & { reports: OrgNode[] };
type OrgContext = Context<DashboardEnv>;

export const orgPage = new Hono<DashboardEnv>();

const HIRE_FIELDS = [
  "name",
  "role",
  "title",
  "reportsTo",
  "adapterType",
  "adapterConfig",
  "budgetMonthlyCents",
] as const;

const PAUSABLE: readonly Agent["status"][] = ["idle", "running", "error"];

/** `csrf` is null for a viewer: no buttons. */
type Csrf = string | null;

function LifecycleButton({ agent, csrf }: { agent: Pick<Agent, "id" | "name" | "status">; csrf: Csrf }) {
  const action = PAUSABLE.includes(agent.status) ? "pause" : agent.status === "paused" ? "resume" : null;
  if (!action || csrf === null) return null;
  return (
    <form method="post" action={`/agents/${agent.id}/${action}`} class="inline">
      <input type="hidden" name="_csrf" value={csrf} />
      <button type="submit" class="secondary">
        {action === "pause" ? "Pause" : "Resume"} <span class="sr-only">{agent.name}</span>
      </button>
    </form>
  );
}

function OrgBranch({ node, csrf }: { node: OrgNode; csrf: Csrf }) {
  return (
    <li>
      <div class="node">
        <strong>{node.name}</strong>
        <span>{node.title ? `${node.role}, ${node.title}` : node.role}</span>
        <StatusBadge status={node.status} />
        <LifecycleButton agent={node} csrf={csrf} />
      </div>
      {node.reports.length > 0 && (
        <ul>
          {node.reports.map((report) => (
            <OrgBranch node={report} csrf={csrf} />
          ))}
        </ul>
      )}
    </li>
  );
}

function collectIds(nodes: readonly OrgNode[], into = new Set<string>()): Set<string> {
  for (const node of nodes) {
    into.add(node.id);
    collectIds(node.reports, into);
  }
  return into;
}

function OrgChart({
  tree,
  agents,
  company,
  csrf,
}: {
  tree: OrgNode[];
  agents: Agent[];
  company: Company;
  csrf: Csrf;
}) {
  const inTree = collectIds(tree);
  const outside = agents.filter((agent) => !inTree.has(agent.id));
  const pending = agents.filter((agent) => agent.status === "pending_approval");
  return (
    <section aria-labelledby="org-chart">
      <h2 id="org-chart">Reporting lines</h2>
      {tree.length === 0 ? (
        <EmptyState>No agents yet: request a hire below.</EmptyState>
      ) : (
        <ul class="tree">
          {tree.map((node) => (
            <OrgBranch node={node} csrf={csrf} />
          ))}
        </ul>
      )}
      {pending.length > 0 && (
        <p>
          {pending.length} hire{pending.length === 1 ? "" : "s"} waiting for the board:{" "}
          {pending.map((agent) => agent.name).join(", ")}.{" "}
          <a href={`/companies/${company.id}/approvals`}>Decide on the pending hires</a>
        </p>
      )}
      {outside.length > 0 && (
        <>
          <h3>Not in the chart</h3>
          <ul>
            {outside.map((agent) => (
              <li>
                {agent.name} <span class="muted">{agent.role}</span> <StatusBadge status={agent.status} />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

const ROLE_OPTIONS = AGENT_ROLES.map((role) => ({ value: role, label: role }));
const ADAPTER_OPTIONS = ADAPTER_TYPES.map((type) => ({ value: type, label: type }));

function HireForm({
  company,
  agents,
  csrf,
  form,
}: {
  company: Company;
  agents: Agent[];
  csrf: string;
  form: FormState;
}) {
  const managers = [
    { value: "", label: "Nobody" },
    ...agents
      .filter((agent) => agent.status !== "terminated")
      .map((agent) => ({ value: agent.id, label: `${agent.name} (${agent.role})` })),
  ];
  return (
    <Form action={`/companies/${company.id}/agent-hires`} csrf={csrf} form={form} label="Hire an agent">
      <Field form={form} name="name" label="Agent name" required />
      <SelectField form={form} name="role" label="Role" options={ROLE_OPTIONS} />
      <Field form={form} name="title" label="Title" hint="Optional, e.g. Backend engineer." />
      <SelectField form={form} name="reportsTo" label="Reports to" options={managers} />
      <SelectField form={form} name="adapterType" label="Adapter" options={ADAPTER_OPTIONS} />
      <TextAreaField
        form={form}
        name="adapterConfig"
        label="Adapter config (JSON)"
        rows={4}
        hint={'e.g. {"command": "node", "args": ["agent.mjs"]}'}
      />
      <Field
        form={form}
        name="budgetMonthlyCents"
        label="Monthly budget (cents)"
        type="number"
        min="0"
        step="1"
        hint="Optional; 0 or empty means no limit."
      />
      <div>
        <button type="submit">Request hire</button>
      </div>
    </Form>
  );
}

interface OrgView {
  form?: FormState;
  alert?: string;
  status?: ContentfulStatusCode;
}

async function showOrg(c: OrgContext, companyId: string, view: OrgView = {}) {
  const company = await loadCompany(c, companyId);
  const [tree, agents, role] = await Promise.all([
    c.var.api.get<OrgNode[]>(`${apiCompanyPath(company.id)}/org`),
    loadAgents(c, company.id),
    loadMyRole(c, company.id),
  ]);
  const editable = mayChange(role);
  const form = view.form ?? blankForm({ role: "general", adapterType: ADAPTER_TYPES[0] });
  return render(
    c,
    {
      title: `${company.name}: org chart`,
      section: "companies",
      company: companyNav(company, "org"),
      children: (
        <>
          <ActionAlert message={view.alert} />
          <OrgChart tree={tree} agents={agents} company={company} csrf={editable ? c.var.csrf : null} />
          {editable ? (
            <section class="panel" aria-labelledby="org-hire">
              <h2 id="org-hire">Hire an agent</h2>
              <p class="muted">
                {company.requireBoardApprovalForNewAgents
                  ? "The new agent waits for a board decision under Approvals before it can work."
                  : "The new agent starts at once (this company does not require board approval)."}
              </p>
              <HireForm company={company} agents={agents} csrf={c.var.csrf} form={form} />
            </section>
          ) : (
            <p class="muted">{READ_ONLY_NOTE}</p>
          )}
        </>
      ),
    },
    view.status ?? 200,
  );
}

orgPage.get("/companies/:companyId/org", (c) => showOrg(c, c.req.param("companyId")));

type JsonParse = { ok: true; value: unknown } | { ok: false; message: string };

function parseJsonField(text: string): JsonParse {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return {
      ok: false,
      message: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

orgPage.post("/companies/:companyId/agent-hires", async (c) => {
  const companyId = c.req.param("companyId");
  const values = c.var.form;
  const configText = values.adapterConfig?.trim() ?? "";
  const config = configText === "" ? { ok: true as const, value: undefined } : parseJsonField(configText);
  if (!config.ok)
    return showOrg(c, companyId, {
      form: { values, errors: { adapterConfig: config.message } },
      status: 400,
    });
  const result = await c.var.api.send<HireResult>("POST", `${apiCompanyPath(companyId)}/agent-hires`, {
    name: values.name ?? "",
    role: values.role,
    title: optionalText(values.title),
    reportsTo: optionalText(values.reportsTo) ?? null,
    adapterType: values.adapterType,
    adapterConfig: config.value,
    budgetMonthlyCents: optionalNumber(values.budgetMonthlyCents),
  });
  if (!result.ok) {
    // showOrg reads the company first: an unknown or foreign one becomes the API's 404 page.
    return showOrg(c, companyId, {
      form: failedForm(values, result, HIRE_FIELDS),
      status: failureStatus(result),
    });
  }
  const message = result.data.approval ? "Hire requested: approve it under Approvals" : "Agent hired";
  return redirectWithFlash(c, `/companies/${result.data.agent.companyId}/org`, message);
});

const LIFECYCLE_DONE = { pause: "paused", resume: "resumed" } as const;

for (const action of ["pause", "resume"] as const) {
  orgPage.post(`/agents/:agentId/${action}`, async (c) => {
    const agentPath = `/api/agents/${encodeURIComponent(c.req.param("agentId"))}`;
    const agent = await c.var.api.get<Agent>(agentPath);
    const result = await c.var.api.send<Agent>("POST", `${agentPath}/${action}`);
    if (!result.ok)
      return showOrg(c, agent.companyId, {
        alert: `${agent.name}: ${result.error}`,
        status: failureStatus(result),
      });
    return redirectWithFlash(
      c,
      `/companies/${agent.companyId}/org`,
      `${agent.name} ${LIFECYCLE_DONE[action]}`,
    );
  });
}
