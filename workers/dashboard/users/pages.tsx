import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { UserSchema } from "../../auth/schemas";
import { ROLES } from "../../db/schema";
import { fieldOf } from "../sessions/shared";
import {
  ActionButton,
  blankForm,
  DataTable,
  Field,
  Form,
  type FormState,
  SelectField,
  Time,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { failureStatus, redirectWithFlash, render } from "../ui/render";

type User = z.infer<typeof UserSchema>;
type Ctx = Context<DashboardEnv>;

const ROLE_OPTIONS = ROLES.map((role) => ({ value: role, label: role }));
const userApi = (id: string) => `/api/users/${encodeURIComponent(id)}`;

/** A per-row select: its own id and a label naming the user, since every row has one. */
function RoleForm({ user, csrf }: { user: User; csrf: string }) {
  const id = `role-${user.id}`;
  return (
    <Form action={`/users/${encodeURIComponent(user.id)}/role`} csrf={csrf} class="row">
      <label class="sr-only" for={id}>
        Role of {user.name}
      </label>
      <select id={id} name="role">
        {ROLES.map((role) => (
          <option value={role} selected={role === user.role}>
            {role}
          </option>
        ))}
      </select>
      <button type="submit" class="secondary">
        Change role
      </button>
    </Form>
  );
}

function UserTable({ users, viewer, csrf }: { users: User[]; viewer: string; csrf: string }) {
  return (
    <DataTable headings={["Name", "E-mail", "Role", "Created", "Delete"]}>
      {users.map((user) => (
        <tr>
          <td>
            {user.name}
            {user.id === viewer && <span class="muted"> (you)</span>}
          </td>
          <td>{user.email}</td>
          <td>
            <RoleForm user={user} csrf={csrf} />
          </td>
          <td>
            <Time value={user.createdAt} />
          </td>
          <td>
            <ActionButton
              action={`/users/${encodeURIComponent(user.id)}/delete`}
              csrf={csrf}
              label="Delete"
              variant="danger"
              confirm={`Delete ${user.email} with their sessions and API key?`}
            />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

function AddUserForm({ csrf, form }: { csrf: string; form: FormState }) {
  return (
    <Form action="/users" csrf={csrf} form={form}>
      <Field form={form} name="name" label="Name" required />
      <Field form={form} name="email" label="E-mail" type="email" autocomplete="off" required />
      <Field
        form={form}
        name="password"
        label="Password"
        type="password"
        autocomplete="new-password"
        required
      />
      <SelectField form={form} name="role" label="Role" options={ROLE_OPTIONS} />
      <div>
        <button type="submit">Add user</button>
      </div>
    </Form>
  );
}

/** The users page; the API's 403 for anyone but a SUPERADMIN becomes the error page. */
async function showUsers(
  c: Ctx,
  extras: { form?: FormState; alert?: string } = {},
  status: ContentfulStatusCode = 200,
) {
  const users = await c.var.api.get<User[]>("/api/users");
  return render(
    c,
    {
      title: "Users",
      section: "users",
      children: (
        <>
          {extras.alert && (
            <p class="alert" role="alert">
              {extras.alert}
            </p>
          )}
          <UserTable users={users} viewer={c.var.viewer.id} csrf={c.var.csrf} />
          <section class="panel" aria-labelledby="add-user-heading">
            <h2 id="add-user-heading">Add user</h2>
            <AddUserForm csrf={c.var.csrf} form={extras.form ?? blankForm({ role: "OWNER" })} />
          </section>
        </>
      ),
    },
    status,
  );
}

export const userPages = new Hono<DashboardEnv>();

userPages.get("/users", (c) => showUsers(c));

userPages.post("/users", async (c) => {
  const values = {
    name: fieldOf(c.var.form, "name"),
    email: fieldOf(c.var.form, "email"),
    role: fieldOf(c.var.form, "role"),
  };
  const result = await c.var.api.send("POST", "/api/users", {
    ...values,
    password: fieldOf(c.var.form, "password"),
  });
  if (!result.ok) {
    // The API's 409 names no field; the e-mail is what must be unique.
    const errors = result.status === 409 ? { email: result.error } : result.fields;
    return showUsers(c, { form: { values, errors } }, failureStatus(result));
  }
  return redirectWithFlash(c, "/users", "User added");
});

userPages.post("/users/:id/role", async (c) => {
  const role = fieldOf(c.var.form, "role");
  const result = await c.var.api.send("PATCH", userApi(c.req.param("id")), { role });
  if (!result.ok) return showUsers(c, { alert: result.error }, failureStatus(result));
  return redirectWithFlash(c, "/users", "Role changed");
});

userPages.post("/users/:id/delete", async (c) => {
  const result = await c.var.api.send("DELETE", userApi(c.req.param("id")));
  if (!result.ok) return showUsers(c, { alert: result.error }, failureStatus(result));
  return redirectWithFlash(c, "/users", "User deleted");
});
