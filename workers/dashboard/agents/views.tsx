import type { z } from "zod";
import type {
  AgentDetailSchema,
  AgentKeySchema,
  ConfigRevisionSchema,
  RunSchema,
} from "../../control/agents";
import { missingCommand } from "../../control/runs";
import { ADAPTER_TYPES } from "../../db/schema";
import { type Agent, dollars } from "../ui/board-shared";
import {
  ActionButton,
  type ActionRefusal,
  DataTable,
  EmptyState,
  Field,
  Form,
  type FormState,
  refusalNamed,
  SelectField,
  StatusBadge,
  TextAreaField,
  Time,
} from "../ui/components";

/** The parts of an agent's page (pages.tsx): facts, forms, revisions, keys and runs. */

export type AgentDetail = z.infer<typeof AgentDetailSchema>;
export type ConfigRevision = z.infer<typeof ConfigRevisionSchema>;
export type AgentKey = z.infer<typeof AgentKeySchema>;
export type Run = z.infer<typeof RunSchema>;

export const CONFIG_FIELDS = ["adapterType", "adapterConfig", "runtimeConfig"] as const;
export const BUDGET_FIELDS = ["budgetMonthlyCents"] as const;
export const KEY_FIELDS = ["name"] as const;

const ADAPTER_OPTIONS = ADAPTER_TYPES.map((type) => ({ value: type, label: type }));

export function AgentsTable({ agents }: { agents: Agent[] }) {
  if (agents.length === 0) return <EmptyState>No agents yet: hire one from the org chart.</EmptyState>;
  const names = new Map(agents.map((agent) => [agent.id, agent.name] as const));
  return (
    <DataTable
      headings={["Agent", "Role", "Status", "Reports to", "Adapter", "Spent / budget", "Last heartbeat"]}
    >
      {agents.map((agent) => (
        <tr>
          <td>
            <a href={`/agents/${agent.id}`}>{agent.name}</a>
          </td>
          <td>{agent.title ? `${agent.role}, ${agent.title}` : agent.role}</td>
          <td>
            <StatusBadge status={agent.status} />
          </td>
          <td>{agent.reportsTo ? (names.get(agent.reportsTo) ?? "—") : "—"}</td>
          <td>{agent.adapterType}</td>
          <td>
            {dollars(agent.spentMonthlyCents)} /{" "}
            {agent.budgetMonthlyCents > 0 ? dollars(agent.budgetMonthlyCents) : "no limit"}
          </td>
          <td>
            <Time value={agent.lastHeartbeatAt} />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

export function AgentFacts({ agent }: { agent: AgentDetail }) {
  const manager = agent.chainOfCommand[0];
  return (
    <section class="panel" aria-labelledby="agent-status">
      <h2 id="agent-status">Status</h2>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={agent.status} />
          {agent.pauseReason && <span class="muted"> ({agent.pauseReason.replace(/_/g, " ")})</span>}
        </dd>
        <dt>Role</dt>
        <dd>{agent.title ? `${agent.role}, ${agent.title}` : agent.role}</dd>
        <dt>Reports to</dt>
        <dd>{manager ? `${manager.name} (${manager.role})` : "Nobody"}</dd>
        <dt>Adapter</dt>
        <dd>
          {agent.adapterType}
          <CommandWarning agent={agent} />
        </dd>
        <dt>Spent this month</dt>
        <dd>
          {dollars(agent.spentMonthlyCents)}
          {agent.budgetMonthlyCents > 0 ? ` of ${dollars(agent.budgetMonthlyCents)}` : " (no budget)"}
        </dd>
        <dt>Last heartbeat</dt>
        <dd>
          <Time value={agent.lastHeartbeatAt} />
        </dd>
      </dl>
    </section>
  );
}

/** Said before the first run fails: an agent whose adapter has nothing to start. */
function CommandWarning({ agent }: { agent: AgentDetail }) {
  const problem = missingCommand(agent);
  return problem ? <p class="alert">Its runs will fail: {problem}.</p> : null;
}

export function ConfigForm(props: { agentId: string; csrf: string; form: FormState }) {
  const { form } = props;
  return (
    <Form action={`/agents/${props.agentId}/config`} csrf={props.csrf} form={form} label="Configuration">
      <SelectField form={form} name="adapterType" label="Adapter" options={ADAPTER_OPTIONS} />
      <TextAreaField
        form={form}
        name="adapterConfig"
        label="Adapter config (JSON)"
        rows={8}
        hint="Replaced as a whole. Redacted values (***REDACTED***) keep the stored secret."
      />
      <TextAreaField
        form={form}
        name="runtimeConfig"
        label="Runtime config (JSON)"
        rows={4}
        hint='e.g. {"heartbeat": {"enabled": true, "intervalSec": 3600}, "maxConcurrentRuns": 1}'
      />
      <div>
        <button type="submit">Save configuration</button>
      </div>
    </Form>
  );
}

export function BudgetForm(props: { agentId: string; csrf: string; form: FormState }) {
  return (
    <Form action={`/agents/${props.agentId}/budget`} csrf={props.csrf} form={props.form} label="Budget">
      <Field
        form={props.form}
        name="budgetMonthlyCents"
        label="Monthly budget (cents)"
        type="number"
        min="0"
        step="1"
        hint="0 means no limit. At the budget the agent is paused."
      />
      <div>
        <button type="submit">Save budget</button>
      </div>
    </Form>
  );
}

function revisionAuthor(revision: ConfigRevision, names: ReadonlyMap<string, string>, viewerId: string) {
  if (revision.createdByAgentId) return names.get(revision.createdByAgentId) ?? "An agent";
  return revision.createdByUserId === viewerId ? "You" : "A board member";
}

export function RevisionList(props: {
  agentId: string;
  revisions: ConfigRevision[];
  names: ReadonlyMap<string, string>;
  viewerId: string;
  /** Null for a viewer: nothing to press. */
  csrf: string | null;
  terminated: boolean;
}) {
  if (props.revisions.length === 0)
    return <EmptyState>The configuration has not changed since the hire.</EmptyState>;
  return (
    <DataTable headings={["When", "Change", "Keys", "By", "Roll back"]}>
      {props.revisions.map((revision, index) => (
        <tr>
          <td>
            <Time value={revision.createdAt} />
          </td>
          <td>
            {revision.source === "rollback" ? "rolled back" : revision.source}
            {index === 0 && <span class="muted"> (latest)</span>}
          </td>
          <td>{revision.changedKeys.join(", ")}</td>
          <td>{revisionAuthor(revision, props.names, props.viewerId)}</td>
          <td>
            {props.terminated || props.csrf === null ? (
              "—"
            ) : (
              <ActionButton
                action={`/agents/${props.agentId}/config-revisions/${revision.id}/rollback`}
                csrf={props.csrf}
                label={`Restore the config from before the change of ${revision.createdAt.slice(0, 19).replace("T", " ")}`}
                variant="secondary"
                confirm="Restore the configuration from before this change?"
              />
            )}
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

/** Who minted a key, as the key list names them (the platform mints each run's own key). */
function minterLabel(minter: AgentKey["createdBy"]): string {
  if (minter === null) return "the platform";
  if (minter.type === "agent") return minter.name ?? "a deleted agent";
  if (minter.name === null) return "a deleted user";
  return minter.email ? `${minter.name} (${minter.email})` : minter.name;
}

export function KeyList(props: { agentId: string; keys: AgentKey[]; csrf: string | null }) {
  if (props.keys.length === 0) return <EmptyState>No keys.</EmptyState>;
  return (
    <DataTable headings={["Name", "Starts with", "Created", "Minted by", "Last used", "State"]}>
      {props.keys.map((key) => (
        <tr>
          <td>{key.name}</td>
          <td>
            <code>{key.displayPrefix}</code>
          </td>
          <td>
            <Time value={key.createdAt} />
          </td>
          <td>{minterLabel(key.createdBy)}</td>
          <td>
            <Time value={key.lastUsedAt} />
          </td>
          <td>
            {key.revokedAt ? (
              <>
                revoked <Time value={key.revokedAt} />
              </>
            ) : props.csrf === null ? (
              "active"
            ) : (
              <ActionButton
                action={`/agents/${props.agentId}/keys/${key.id}/revoke`}
                csrf={props.csrf}
                label={`Revoke ${key.name} (${key.displayPrefix})`}
                variant="danger"
                confirm={`Revoke the key ${key.name}? The agent can no longer use it.`}
              />
            )}
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

export function NewKeyForm(props: { agentId: string; csrf: string; form: FormState }) {
  return (
    <Form action={`/agents/${props.agentId}/keys`} csrf={props.csrf} form={props.form} label="New key">
      <Field form={props.form} name="name" label="Key name" hint='Optional label; default "default".' />
      <div>
        <button type="submit">Create key</button>
      </div>
    </Form>
  );
}

export function RunList({ runs }: { runs: Run[] }) {
  if (runs.length === 0) return <EmptyState>No runs yet.</EmptyState>;
  return (
    <DataTable headings={["Queued", "Woken by", "Status", "Issue", "Cost", "Run"]}>
      {runs.map((run) => (
        <tr>
          <td>
            <Time value={run.createdAt} />
          </td>
          <td>{run.wakeReason.replace(/_/g, " ")}</td>
          <td>
            <StatusBadge status={run.status} />
            {run.waitingForRunner && <span class="muted"> (waiting for a runner)</span>}
            {run.queuePosition !== null && !run.waitingForRunner && (
              <span class="muted"> (number {run.queuePosition} in the company's queue)</span>
            )}
          </td>
          <td>{run.issueId ? <a href={`/issues/${run.issueId}`}>Open the issue</a> : "—"}</td>
          <td>{dollars(run.costCents)}</td>
          <td>
            <a href={`/runs/${run.id}`}>
              Transcript <span class="sr-only">of the run queued {run.createdAt}</span>
            </a>
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

/** Terminate, then Delete: the order the API keeps (deleting a live agent is its 409). */
export function AgentRemoval(props: {
  agent: AgentDetail;
  csrf: string;
  refusal: ActionRefusal | undefined;
}) {
  const { agent, csrf } = props;
  const terminated = agent.status === "terminated";
  const action = terminated ? "delete" : "terminate";
  return (
    <section class="panel" aria-labelledby="agent-removal">
      <h2 id="agent-removal">{terminated ? "Delete" : "Terminate"}</h2>
      <p class="muted">
        {terminated
          ? "Deleting removes its keys, configuration history, runs and cost events; its comments, finished issues and activity stay. No open issue or routine may still be assigned to it."
          : "Terminating is permanent: its keys are revoked and its queued runs cancelled. A terminated agent can then be deleted."}
      </p>
      <ActionButton
        action={`/agents/${agent.id}/${action}`}
        csrf={csrf}
        label={`${terminated ? "Delete" : "Terminate"} ${agent.name}`}
        variant="danger"
        confirm={
          terminated
            ? `Delete ${agent.name} with its keys, runs and cost history? This cannot be undone.`
            : `Terminate ${agent.name}? It never runs again.`
        }
        error={refusalNamed(props.refusal, `remove-${agent.id}`)}
      />
    </section>
  );
}
