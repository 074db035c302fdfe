import type { Context } from "hono";
import { Hono } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import { randomToken, timingSafeEqual } from "../../auth/crypto";
import type { InvitePreviewSchema } from "../../control/members";
import { type ApiClient, createApiClient, PageError } from "../ui/api-client";
import { blankForm, Field, Form, type FormState } from "../ui/components";
import type { ApiFetch, DashboardEnv } from "../ui/env";
import { failureStatus, redirectWithFlash, renderBare } from "../ui/render";

type Preview = z.infer<typeof InvitePreviewSchema>;

// ---------------------------------------------------------------------------------------------
// GET /invites/:token/signup (signed out: what the invite offers, and the account form),
// POST /invites/:token/signup: create the account, join, signed in, then the company
// ---------------------------------------------------------------------------------------------

/**
 * No session yet, so the form's CSRF defence is the sign-in page's: a double-submit token in an
 * HttpOnly SameSite=Strict cookie (scoped to /invites) that the form must echo.
 */
const SIGNUP_CSRF_COOKIE = "dashboard.signup-csrf";
const PASSWORD_POLICY = "At least 8 characters (up to 256); a passphrase of several words is best.";

const apiSignupPath = (token: string) => `/api/member-invites/${encodeURIComponent(token)}/signup`;
const signInPath = (token: string) => `/login?next=${encodeURIComponent(`/invites/${token}`)}`;

/** What an unusable link says, and its status: the page is readable, and still a 4xx. */
const UNUSABLE: Record<Exclude<Preview["state"], "pending">, [string, ContentfulStatusCode]> = {
  used: ["This invite link was already used. Ask the company's owner for a new one.", 409],
  revoked: ["This invite link was revoked. Ask the company's owner for a new one.", 410],
  expired: ["This invite link has expired. Ask the company's owner for a new one.", 410],
};

function signupCsrf(c: Context<DashboardEnv>): string {
  const token = getCookie(c, SIGNUP_CSRF_COOKIE) ?? randomToken(24);
  setCookie(c, SIGNUP_CSRF_COOKIE, token, {
    path: "/invites",
    httpOnly: true,
    sameSite: "Strict",
    maxAge: 3600,
  });
  return token;
}

function SignupForm(props: {
  preview: Preview & { email: string };
  token: string;
  csrf: string;
  form: FormState;
}) {
  const { preview, form } = props;
  return (
    <Form action={`/invites/${props.token}/signup`} csrf={props.csrf} form={form} label="Create your account">
      <div class="field">
        <label for="signup-email">E-mail</label>
        <span class="hint" id="signup-email-hint">
          The invite is for this address; opening it proves it is yours.
        </span>
        <input
          id="signup-email"
          type="email"
          value={preview.email}
          readonly
          autocomplete="username"
          aria-describedby="signup-email-hint"
        />
      </div>
      <Field form={form} name="name" label="Your name" autocomplete="name" required />
      <Field
        form={form}
        name="password"
        label="Password"
        type="password"
        autocomplete="new-password"
        hint={PASSWORD_POLICY}
        required
      />
      <div>
        <button type="submit">Create account and join {preview.companyName}</button>
      </div>
    </Form>
  );
}

function SignupBody(props: { preview: Preview; token: string; csrf: string; form: FormState }) {
  const { preview, token } = props;
  if (preview.state !== "pending") return <p role="alert">{UNUSABLE[preview.state][0]}</p>;
  const email = preview.email;
  return (
    <>
      <p>
        You are invited to join <strong>{preview.companyName}</strong> as{" "}
        {preview.role === "owner" ? "an owner" : `a ${preview.role}`}.
      </p>
      {preview.note && <p class="muted">Note from the owner: {preview.note}</p>}
      {email === null ? (
        <p>
          This link is for someone who already has an account. <a href={signInPath(token)}>Sign in</a> to
          join; to bring someone new, the owner creates an invite for their e-mail.
        </p>
      ) : (
        <>
          <h2>Create your account</h2>
          <SignupForm preview={{ ...preview, email }} token={token} csrf={props.csrf} form={props.form} />
        </>
      )}
      <p class="muted">
        Already have an account? <a href={signInPath(token)}>Sign in</a>, then join.
      </p>
    </>
  );
}

async function showSignup(
  c: Context<DashboardEnv>,
  api: ApiClient,
  token: string,
  form: FormState,
  status?: ContentfulStatusCode,
) {
  const preview = await api.get<Preview>(apiSignupPath(token));
  const unusable = preview.state === "pending" ? 200 : UNUSABLE[preview.state][1];
  return renderBare(
    c,
    {
      title: `Join ${preview.companyName}`,
      children: (
        <div class="login panel">
          <SignupBody preview={preview} token={token} csrf={signupCsrf(c)} form={form} />
        </div>
      ),
    },
    status ?? unusable,
  );
}

async function csrfMatches(c: Context<DashboardEnv>, presented: unknown): Promise<boolean> {
  const expected = getCookie(c, SIGNUP_CSRF_COOKIE);
  if (!expected || typeof presented !== "string") return false;
  return timingSafeEqual(expected, presented);
}

/** Public pages (index.tsx lets them through signed out): the API itself is called with no credential. */
export function inviteSignupPage(apiFetch: ApiFetch) {
  const pages = new Hono<DashboardEnv>();

  pages.get("/invites/:token/signup", (c) =>
    showSignup(c, createApiClient(c, apiFetch, ""), c.req.param("token"), blankForm()),
  );

  pages.post("/invites/:token/signup", async (c) => {
    const token = c.req.param("token");
    const api = createApiClient(c, apiFetch, "");
    const body = await c.req.parseBody();
    const name = typeof body.name === "string" ? body.name : "";
    const password = typeof body.password === "string" ? body.password : "";
    if (!(await csrfMatches(c, body._csrf)))
      return showSignup(
        c,
        api,
        token,
        { values: { name }, errors: { _form: "The form expired; try again." } },
        403,
      );
    const result = await api.send<{ companyId: string; companyName: string }>("POST", apiSignupPath(token), {
      name,
      password,
    });
    if (!result.ok) {
      if (result.status === 404) throw new PageError(404, result.error);
      return showSignup(c, api, token, { values: { name }, errors: result.fields }, failureStatus(result));
    }
    for (const cookie of result.setCookies) c.header("Set-Cookie", cookie, { append: true });
    return redirectWithFlash(
      c,
      `/companies/${result.data.companyId}`,
      `Welcome to ${result.data.companyName}`,
    );
  });

  return pages;
}
