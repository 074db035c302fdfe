import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { ApprovalSchema } from "../../control/approvals";
import type { IssueSchema } from "../../control/issues";
import {
  actorLabel,
  agentNamesOf,
  apiCompanyPath,
  type Company,
  companyNav,
  dollars,
  failedForm,
  loadAgents,
  loadCompany,
  optionalText,
} from "../ui/board-shared";
import { DataTable, EmptyState, errorId, Form, type FormState, StatusBadge, Time } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { loadMyRole, mayChange, READ_ONLY_NOTE } from "../ui/member-shared";
import { failureStatus, redirectWithFlash, render } from "../ui/render";

type Approval = z.infer<typeof ApprovalSchema>;
type Issue = z.infer<typeof IssueSchema>;
type ApprovalContext = Context<DashboardEnv>;
type Names = ReadonlyMap<string, string>;

export const approvalPages = new Hono<DashboardEnv>();

/** The three decisions: the button's value, the API route that takes it, and the confirmation. */
const DECISIONS = {
  approve: { label: "Approve", route: "approve", done: "Approved" },
  reject: { label: "Reject", route: "reject", done: "Rejected" },
  "request-revision": { label: "Request revision", route: "request-revision", done: "Revision requested" },
} as const;
type Decision = keyof typeof DECISIONS;
const isDecision = (value: string | undefined): value is Decision =>
  value !== undefined && value in DECISIONS;

const OPEN: readonly Approval["status"][] = ["pending", "revision_requested"];
/** Decided approvals shown as history; the API keeps them all. */
const HISTORY_SHOWN = 50;

/** Which decisions the API accepts from a status (request-revision only from pending). */
const decisionsFor = (status: Approval["status"]): Decision[] =>
  status === "pending" ? ["approve", "reject", "request-revision"] : ["approve", "reject"];

const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

function headline(approval: Approval): string {
  const payload = approval.payload;
  if (approval.type === "hire_agent") {
    const name = text(payload.name) ?? "an agent";
    const role = text(payload.role);
    return `Hire ${name}${role ? ` (${role})` : ""}`;
  }
  const subject = text(payload.title) ?? text(payload.summary);
  const type = approval.type.replace(/_/g, " ");
  return subject ? `${type}: ${subject}` : type;
}

function HireDetails({ payload, names }: { payload: Approval["payload"]; names: Names }) {
  const managerId = text(payload.reportsTo);
  const budget = typeof payload.budgetMonthlyCents === "number" ? payload.budgetMonthlyCents : 0;
  return (
    <dl class="facts">
      <dt>Title</dt>
      <dd>{text(payload.title) ?? "—"}</dd>
      <dt>Reports to</dt>
      <dd>{managerId ? (names.get(managerId) ?? "An agent") : "Nobody"}</dd>
      <dt>Adapter</dt>
      <dd>{text(payload.adapterType) ?? "—"}</dd>
      <dt>Monthly budget</dt>
      <dd>{budget > 0 ? dollars(budget) : "No limit"}</dd>
    </dl>
  );
}

function Requester({ approval, names, viewerId }: { approval: Approval; names: Names; viewerId: string }) {
  const who = approval.requestedByAgentId
    ? actorLabel(viewerId, names, { type: "agent", id: approval.requestedByAgentId })
    : actorLabel(viewerId, names, {
        type: "user",
        id: approval.requestedByUserId,
        name: approval.requestedByName,
      });
  return (
    <p class="muted">
      Requested by {who}, <Time value={approval.createdAt} />
    </p>
  );
}

function LinkedIssues({ issues }: { issues: Issue[] }) {
  if (issues.length === 0) return null;
  return (
    <p>
      Linked issues:{" "}
      {issues.map((issue, index) => (
        <>
          {index > 0 && ", "}
          <a href={`/issues/${issue.id}`}>
            {issue.identifier} {issue.title}
          </a>
        </>
      ))}
    </p>
  );
}

/** The note has an id per approval: several decision forms share the page. */
function NoteField({ approvalId, form }: { approvalId: string; form: FormState }) {
  const name = `decisionNote-${approvalId}`;
  const id = `field-${name}`;
  const error = form.errors.decisionNote;
  return (
    <div class="field">
      <label for={id}>Decision note (optional)</label>
      <textarea
        id={id}
        name="decisionNote"
        rows={2}
        aria-invalid={error ? "true" : undefined}
        aria-describedby={error ? errorId(name) : undefined}
      >
        {form.values.decisionNote ?? ""}
      </textarea>
      {error && (
        <p class="field-error" id={errorId(name)}>
          {error}
        </p>
      )}
    </div>
  );
}

function DecisionForm({ approval, csrf, form }: { approval: Approval; csrf: string; form: FormState }) {
  return (
    <Form
      action={`/approvals/${approval.id}/decide`}
      csrf={csrf}
      form={form}
      label={`Decide: ${headline(approval)}`}
    >
      <NoteField approvalId={approval.id} form={form} />
      <div class="row">
        {decisionsFor(approval.status).map((decision) => (
          <button
            type="submit"
            name="decision"
            value={decision}
            class={decision === "approve" ? undefined : decision === "reject" ? "danger" : "secondary"}
          >
            {DECISIONS[decision].label}
          </button>
        ))}
      </div>
    </Form>
  );
}

interface Failed {
  approvalId: string;
  form: FormState;
}

function OpenApproval(props: {
  approval: Approval;
  issues: Issue[];
  names: Names;
  viewerId: string;
  /** Null for a viewer: no decision form. */
  csrf: string | null;
  failed?: Failed;
}) {
  const { approval } = props;
  const form = props.failed?.approvalId === approval.id ? props.failed.form : { values: {}, errors: {} };
  return (
    <article class="card" aria-labelledby={`approval-${approval.id}`}>
      <h3 id={`approval-${approval.id}`}>
        {headline(approval)} <StatusBadge status={approval.status} />
      </h3>
      <Requester approval={approval} names={props.names} viewerId={props.viewerId} />
      {approval.type === "hire_agent" ? (
        <HireDetails payload={approval.payload} names={props.names} />
      ) : (
        <pre>{JSON.stringify(approval.payload, null, 2)}</pre>
      )}
      <LinkedIssues issues={props.issues} />
      {approval.decisionNote && <p>Board note: {approval.decisionNote}</p>}
      {props.csrf !== null && <DecisionForm approval={approval} csrf={props.csrf} form={form} />}
    </article>
  );
}

/** approvalId → the member who decided it on the company's WhatsApp line (issue 28). */
type ViaWhatsApp = ReadonlyMap<string, string>;

type Activity = {
  action: string;
  actorType: string;
  actorId: string;
  entityId: string;
  details: Record<string, unknown>;
};
type Member = { userId: string; name: string };

/**
 * Which decisions were answered on the company's line: the activity log marks them `via: "whatsapp"`
 * (only the line's own in-process call can, auth/in-process.ts), with the member as the actor.
 */
async function decidedViaWhatsApp(c: ApprovalContext, companyId: string): Promise<ViaWhatsApp> {
  const [activity, { members }] = await Promise.all([
    c.var.api.get<Activity[]>(`${apiCompanyPath(companyId)}/activity?entityType=approval&limit=200`),
    c.var.api.get<{ members: Member[] }>(`${apiCompanyPath(companyId)}/members`),
  ]);
  const names = new Map(members.map((member) => [member.userId, member.name]));
  const via = new Map<string, string>();
  for (const entry of activity)
    if (entry.details.via === "whatsapp" && entry.actorType === "user" && !via.has(entry.entityId))
      via.set(entry.entityId, names.get(entry.actorId) ?? "a former member");
  return via;
}

function History(props: { approvals: Approval[]; names: Names; viewerId: string; viaWhatsApp: ViaWhatsApp }) {
  const { approvals, names, viewerId } = props;
  if (approvals.length === 0) return <EmptyState>No decisions yet.</EmptyState>;
  return (
    <DataTable headings={["Request", "Requested by", "Decision", "Decided", "Note"]}>
      {approvals.map((approval) => (
        <tr>
          <td>{headline(approval)}</td>
          <td>
            {approval.requestedByAgentId
              ? actorLabel(viewerId, names, { type: "agent", id: approval.requestedByAgentId })
              : actorLabel(viewerId, names, {
                  type: "user",
                  id: approval.requestedByUserId,
                  name: approval.requestedByName,
                })}
          </td>
          <td>
            <StatusBadge status={approval.status} />
            {props.viaWhatsApp.has(approval.id) && (
              <span class="muted"> answered via WhatsApp by {props.viaWhatsApp.get(approval.id)}</span>
            )}
          </td>
          <td>
            <Time value={approval.decidedAt ?? approval.updatedAt} />
          </td>
          <td>{approval.decisionNote ?? ""}</td>
        </tr>
      ))}
    </DataTable>
  );
}

/**
 * A refused decision on an approval that is no longer open (someone decided it meanwhile) has no form
 * left to show the message in: it goes above the lists, as the same alert a form would show.
 */
function StaleDecision({ failed, approvals }: { failed: Failed; approvals: Approval[] }) {
  const approval = approvals.find((candidate) => candidate.id === failed.approvalId);
  const message = failed.form.errors._form ?? Object.values(failed.form.errors)[0] ?? "";
  return (
    <p class="alert" role="alert" id={errorId("_form")}>
      {approval ? `${headline(approval)}: ` : ""}
      {message}
    </p>
  );
}

async function showApprovals(
  c: ApprovalContext,
  company: Company,
  failed?: Failed,
  status?: ContentfulStatusCode,
) {
  const [approvals, agents, role] = await Promise.all([
    c.var.api.get<Approval[]>(`${apiCompanyPath(company.id)}/approvals`),
    loadAgents(c, company.id),
    loadMyRole(c, company.id),
  ]);
  const open = approvals.filter((approval) => OPEN.includes(approval.status));
  const decided = approvals.filter((approval) => !OPEN.includes(approval.status)).slice(0, HISTORY_SHOWN);
  const linked = await Promise.all(
    open.map((approval) => c.var.api.get<Issue[]>(`/api/approvals/${approval.id}/issues`)),
  );
  const names = agentNamesOf(agents);
  const viewerId = c.var.viewer.id;
  const viaWhatsApp =
    decided.length === 0 ? new Map<string, string>() : await decidedViaWhatsApp(c, company.id);
  return render(
    c,
    {
      title: `${company.name}: approvals`,
      section: "companies",
      company: companyNav(company, "approvals"),
      children: (
        <>
          {failed && !open.some((approval) => approval.id === failed.approvalId) && (
            <StaleDecision failed={failed} approvals={approvals} />
          )}
          {!mayChange(role) && <p class="muted">{READ_ONLY_NOTE}</p>}
          <section aria-labelledby="approvals-open">
            <h2 id="approvals-open">Waiting for a decision</h2>
            {open.length === 0 ? (
              <EmptyState>Nothing is waiting for the board.</EmptyState>
            ) : (
              open.map((approval, index) => (
                <OpenApproval
                  approval={approval}
                  issues={linked[index] ?? []}
                  names={names}
                  viewerId={viewerId}
                  csrf={mayChange(role) ? c.var.csrf : null}
                  failed={failed}
                />
              ))
            )}
          </section>
          <section aria-labelledby="approvals-history">
            <h2 id="approvals-history">Decided</h2>
            <History approvals={decided} names={names} viewerId={viewerId} viaWhatsApp={viaWhatsApp} />
          </section>
        </>
      ),
    },
    status ?? 200,
  );
}

approvalPages.get("/companies/:companyId/approvals", async (c) =>
  showApprovals(c, await loadCompany(c, c.req.param("companyId"))),
);

approvalPages.post("/approvals/:approvalId/decide", async (c) => {
  const approval = await c.var.api.get<Approval>(
    `/api/approvals/${encodeURIComponent(c.req.param("approvalId"))}`,
  );
  const company = await loadCompany(c, approval.companyId);
  const values = c.var.form;
  const decision = values.decision;
  if (!isDecision(decision)) {
    const form = { values, errors: { _form: "Choose Approve, Reject or Request revision." } };
    return showApprovals(c, company, { approvalId: approval.id, form }, 400);
  }
  const { route, done } = DECISIONS[decision];
  const result = await c.var.api.send<Approval>("POST", `/api/approvals/${approval.id}/${route}`, {
    decisionNote: optionalText(values.decisionNote),
  });
  if (!result.ok) {
    const form = failedForm(values, result, ["decisionNote"]);
    return showApprovals(c, company, { approvalId: approval.id, form }, failureStatus(result));
  }
  return redirectWithFlash(c, `/companies/${company.id}/approvals`, done);
});
