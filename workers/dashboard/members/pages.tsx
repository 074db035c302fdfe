import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { CreatedMemberInviteSchema, MemberInviteSchema } from "../../control/members";
import {
  apiCompanyPath,
  type BoardContext,
  type Company,
  companyNav,
  failedForm,
  loadCompany,
} from "../ui/board-shared";
import {
  ActionButton,
  type ActionRefusal,
  blankForm,
  DataTable,
  EmptyState,
  errorId,
  Field,
  FieldError,
  Form,
  type FormState,
  refusalNamed,
  SelectField,
  StatusBadge,
  Time,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { type Member, type MemberRole, mayChange, READ_ONLY_NOTE } from "../ui/member-shared";
import { failureStatus, redirectWithFlash, render } from "../ui/render";

type Invite = z.infer<typeof MemberInviteSchema>;
type CreatedInvite = z.infer<typeof CreatedMemberInviteSchema>;

// ---------------------------------------------------------------------------------------------
// The company's members (settings): list, change role, remove, leave, invite links
// ---------------------------------------------------------------------------------------------

export const memberPages = new Hono<DashboardEnv>();

const ROLE_OPTIONS = [
  { value: "owner", label: "Owner: everything, members and settings included" },
  { value: "member", label: "Member: everything but members and company settings" },
  { value: "viewer", label: "Viewer: reads, changes nothing" },
] as const;
const INVITE_FIELDS = ["role", "email", "note", "expiresInHours"] as const;

const pagePath = (companyId: string) => `/companies/${companyId}/members`;

/** A refused one-row action (`role-<userId>`, `remove-<userId>`, `revoke-<inviteId>`), shown next to that row's control. */
interface RowRefusal extends ActionRefusal {
  /** The role the owner picked, kept in the select after a refused change. */
  role?: string;
}

interface MembersView {
  invite?: FormState;
  created?: CreatedInvite;
  refusal?: RowRefusal;
  status?: ContentfulStatusCode;
}

function RoleForm(props: { company: Company; member: Member; csrf: string; refusal?: RowRefusal }) {
  const { company, member, refusal } = props;
  const name = `role-${member.userId}`;
  const chosen = refusal?.role ?? member.role;
  return (
    <Form
      action={`${pagePath(company.id)}/${member.userId}/role`}
      csrf={props.csrf}
      class="inline"
      label={`Role of ${member.name}`}
    >
      <select
        id={`field-${name}`}
        name="role"
        aria-label={`Role of ${member.name}`}
        aria-invalid={refusal ? "true" : undefined}
        aria-describedby={refusal ? errorId(name) : undefined}
      >
        {ROLE_OPTIONS.map((option) => (
          <option value={option.value} selected={option.value === chosen}>
            {option.value}
          </option>
        ))}
      </select>{" "}
      <button type="submit" class="secondary">
        Change role
      </button>
      <FieldError name={name} message={refusal?.message} />
    </Form>
  );
}

function MemberActions(props: {
  company: Company;
  member: Member;
  me: Member;
  csrf: string;
  view: MembersView;
}) {
  const { company, member, me, csrf, view } = props;
  const action = `${pagePath(company.id)}/${member.userId}/remove`;
  const removeName = `remove-${member.userId}`;
  const removal = refusalNamed(view.refusal, removeName);
  const mine = member.userId === me.userId;
  // Owners change anyone's role, their own included (stepping down while another owner remains).
  const roleForm = me.role === "owner" && (
    <RoleForm
      company={company}
      member={member}
      csrf={csrf}
      refusal={refusalNamed(view.refusal, `role-${member.userId}`)}
    />
  );
  if (!mine && me.role !== "owner") return null;
  return (
    <>
      {roleForm}{" "}
      <ActionButton
        action={action}
        csrf={csrf}
        label={mine ? "Leave company" : `Remove ${member.name}`}
        variant="danger"
        confirm={
          mine
            ? "Leave this company? The agent keys you minted here are revoked."
            : `Remove ${member.name} from the company? The agent keys they minted here are revoked.`
        }
        error={removal}
      />
      {!mine && (
        <ActionButton
          action={action}
          csrf={csrf}
          label={`Remove ${member.name}, keep their agent keys`}
          variant="danger"
          confirm={`Remove ${member.name}? The agent keys they minted here keep working and become yours.`}
          hidden={{ agentKeys: "transfer" }}
        />
      )}
    </>
  );
}

function MembersTable(props: {
  company: Company;
  members: Member[];
  me: Member;
  csrf: string;
  view: MembersView;
}) {
  return (
    <DataTable headings={["Name", "Email", "Role", "Joined", "Actions"]}>
      {props.members.map((member) => (
        <tr>
          <td>{member.userId === props.me.userId ? `${member.name} (you)` : member.name}</td>
          <td>{member.email}</td>
          <td>{member.role}</td>
          <td>
            <Time value={member.joinedAt} />
          </td>
          <td>
            <MemberActions
              company={props.company}
              member={member}
              me={props.me}
              csrf={props.csrf}
              view={props.view}
            />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

function CreatedLink({ created }: { created: CreatedInvite }) {
  return (
    <div class="panel" role="status">
      <p>
        Invite link for a new {created.role}
        {created.email ? ` (${created.email}, who may create an account with it)` : ""}, valid until{" "}
        <Time value={created.expiresAt} />. Copy it now: it is shown only once and works once.
      </p>
      <p>
        <input type="text" readonly value={created.url} aria-label="Invite link" class="copy" />
      </p>
    </div>
  );
}

function RevokeButton(props: { company: Company; invite: Invite; csrf: string; view: MembersView }) {
  const name = `revoke-${props.invite.id}`;
  const refusal = refusalNamed(props.view.refusal, name);
  return (
    <ActionButton
      action={`/companies/${props.company.id}/member-invites/${props.invite.id}/revoke`}
      csrf={props.csrf}
      label="Revoke"
      variant="secondary"
      error={refusal}
    />
  );
}

function InviteSection(props: { company: Company; invites: Invite[]; csrf: string; view: MembersView }) {
  const form = props.view.invite ?? blankForm({ role: "member", expiresInHours: "72" });
  return (
    <section class="panel" aria-labelledby="members-invite">
      <h2 id="members-invite">Invite someone</h2>
      {props.view.created && <CreatedLink created={props.view.created} />}
      <Form
        action={`/companies/${props.company.id}/member-invites`}
        csrf={props.csrf}
        form={form}
        label="New invite link"
      >
        <SelectField form={form} name="role" label="Role" options={ROLE_OPTIONS} />
        <Field
          form={form}
          name="email"
          label="Their e-mail (optional)"
          type="email"
          hint="Only this person may use the link, and someone without an account creates one with it."
        />
        <Field
          form={form}
          name="note"
          label="Note (optional)"
          hint="Tells pending invites apart; up to 500 characters."
        />
        <Field form={form} name="expiresInHours" label="Valid for (hours)" type="number" min="1" step="1" />
        <div>
          <button type="submit">Create invite link</button>
        </div>
      </Form>
      {props.invites.length === 0 ? (
        <EmptyState>No invite links yet.</EmptyState>
      ) : (
        <DataTable headings={["For", "Note", "Role", "State", "Expires", "Created", ""]}>
          {props.invites.map((invite) => (
            <tr>
              <td>{invite.email ?? "Anyone with an account"}</td>
              <td>{invite.note ?? ""}</td>
              <td>{invite.role}</td>
              <td>
                <StatusBadge status={invite.state} />
              </td>
              <td>
                <Time value={invite.expiresAt} />
              </td>
              <td>
                <Time value={invite.createdAt} />
              </td>
              <td>
                {invite.state === "pending" && (
                  <RevokeButton company={props.company} invite={invite} csrf={props.csrf} view={props.view} />
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

async function showMembers(c: BoardContext, companyId: string, view: MembersView = {}) {
  const company = await loadCompany(c, companyId);
  const base = apiCompanyPath(company.id);
  const [{ members }, me] = await Promise.all([
    c.var.api.get<{ members: Member[] }>(`${base}/members`),
    c.var.api.get<Member>(`${base}/members/me`),
  ]);
  const invites =
    me.role === "owner" ? (await c.var.api.get<{ invites: Invite[] }>(`${base}/member-invites`)).invites : [];
  return render(
    c,
    {
      title: `${company.name}: members`,
      section: "companies",
      company: companyNav(company, "members"),
      children: (
        <>
          <p class="muted">
            Your role: {me.role}. {describeRole(me.role)}
          </p>
          <section aria-labelledby="members-list">
            <h2 id="members-list">Members</h2>
            <MembersTable company={company} members={members} me={me} csrf={c.var.csrf} view={view} />
          </section>
          {me.role === "owner" && (
            <InviteSection company={company} invites={invites} csrf={c.var.csrf} view={view} />
          )}
          <RolesExplained />
        </>
      ),
    },
    view.status ?? 200,
  );
}

/** "Owner" names two things; this says which is which. */
function RolesExplained() {
  return (
    <section class="panel" aria-labelledby="members-roles">
      <h2 id="members-roles">Account roles and company roles</h2>
      <p>
        <strong>Company roles</strong> (owner, member, viewer) are per company and are what this page sets.
        <strong> Account roles</strong> are instance-wide, set by a SUPERADMIN on Users: SUPERADMIN manages
        accounts and sees every WhatsApp session; OWNER and STAFF accounts may do the same as each other,
        which is create companies and use those they belong to. A company owner needs no account role: someone
        who signs up from an invite gets a STAFF account.
      </p>
    </section>
  );
}

function describeRole(role: MemberRole): string {
  if (role === "owner") return "You manage members, invite links and the company's settings.";
  return mayChange(role) ? "Owners manage members and the company's settings." : READ_ONLY_NOTE;
}

memberPages.get("/companies/:companyId/members", (c) => showMembers(c, c.req.param("companyId")));

memberPages.post("/companies/:companyId/members/:userId/role", async (c) => {
  const { companyId, userId } = c.req.param();
  const result = await c.var.api.send<Member>("PATCH", `${apiCompanyPath(companyId)}/members/${userId}`, {
    role: c.var.form.role ?? "",
  });
  if (!result.ok)
    return showMembers(c, companyId, {
      refusal: { name: `role-${userId}`, message: result.error, role: c.var.form.role },
      status: failureStatus(result),
    });
  return redirectWithFlash(c, pagePath(companyId), `${result.data.name} is now ${result.data.role}`);
});

memberPages.post("/companies/:companyId/members/:userId/remove", async (c) => {
  const { companyId, userId } = c.req.param();
  // The agent keys the member minted: revoked unless the owner chose to keep (re-own) them.
  const keys = c.var.form.agentKeys === "transfer" ? "?agentKeys=transfer" : "";
  const result = await c.var.api.send("DELETE", `${apiCompanyPath(companyId)}/members/${userId}${keys}`);
  if (!result.ok)
    return showMembers(c, companyId, {
      refusal: { name: `remove-${userId}`, message: result.error },
      status: failureStatus(result),
    });
  if (userId === c.var.viewer.id) return redirectWithFlash(c, "/companies", "You left the company");
  return redirectWithFlash(c, pagePath(companyId), "Member removed");
});

memberPages.post("/companies/:companyId/member-invites", async (c) => {
  const companyId = c.req.param("companyId");
  const values = c.var.form;
  const hours = values.expiresInHours?.trim() ?? "";
  const result = await c.var.api.send<CreatedInvite>("POST", `${apiCompanyPath(companyId)}/member-invites`, {
    role: values.role ?? "",
    email: values.email?.trim() || undefined,
    note: values.note?.trim() || undefined,
    expiresInHours: /^\d+$/.test(hours) ? Number(hours) : hours === "" ? undefined : hours,
  });
  if (!result.ok)
    return showMembers(c, companyId, {
      invite: failedForm(values, result, INVITE_FIELDS),
      status: failureStatus(result),
    });
  // Rendered, not redirected: the link exists only in this response.
  return showMembers(c, companyId, { created: result.data, status: 201 });
});

memberPages.post("/companies/:companyId/member-invites/:inviteId/revoke", async (c) => {
  const { companyId, inviteId } = c.req.param();
  const result = await c.var.api.send("DELETE", `${apiCompanyPath(companyId)}/member-invites/${inviteId}`);
  if (!result.ok)
    return showMembers(c, companyId, {
      refusal: { name: `revoke-${inviteId}`, message: result.error },
      status: failureStatus(result),
    });
  return redirectWithFlash(c, pagePath(companyId), "Invite link revoked");
});
