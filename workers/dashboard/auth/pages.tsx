import type { Context } from "hono";
import { Hono } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { randomToken, timingSafeEqual } from "../../auth/crypto";
import { createApiClient } from "../ui/api-client";
import { blankForm, Field, Form, type FormState } from "../ui/components";
import type { ApiFetch, DashboardEnv } from "../ui/env";
import { redirectWithFlash, renderBare, safeLocalPath } from "../ui/render";

/**
 * Sign-in has no session yet, so its CSRF defence is a double-submit token: a random value in an
 * HttpOnly SameSite=Strict cookie that the form must echo. A cross-site page can neither read the
 * cookie nor make the browser send it.
 */
const LOGIN_CSRF_COOKIE = "dashboard.login-csrf";

function LoginForm({ csrf, next, form }: { csrf: string; next: string; form: FormState }) {
  return (
    <div class="login panel">
      <Form action={`/login?next=${encodeURIComponent(next)}`} csrf={csrf} form={form} label="Sign in">
        <Field form={form} name="email" label="E-mail" type="email" autocomplete="username" required />
        <Field
          form={form}
          name="password"
          label="Password"
          type="password"
          autocomplete="current-password"
          required
        />
        <div>
          <button type="submit">Sign in</button>
        </div>
      </Form>
    </div>
  );
}

function showLogin(c: Context<DashboardEnv>, form: FormState, status: 200 | 400 | 401 | 403 | 429 = 200) {
  // Reused while it lasts: a second sign-in page (another tab, a redirected favicon request) must not
  // invalidate the form already on screen.
  const token = getCookie(c, LOGIN_CSRF_COOKIE) ?? randomToken(24);
  setCookie(c, LOGIN_CSRF_COOKIE, token, {
    path: "/login",
    httpOnly: true,
    sameSite: "Strict",
    maxAge: 3600,
  });
  const next = safeLocalPath(c.req.query("next"));
  return renderBare(
    c,
    { title: "Sign in", children: <LoginForm csrf={token} next={next} form={form} /> },
    status,
  );
}

async function loginCsrfMatches(c: Context<DashboardEnv>, presented: string | undefined): Promise<boolean> {
  const expected = getCookie(c, LOGIN_CSRF_COOKIE);
  if (!expected || !presented) return false;
  return timingSafeEqual(expected, presented);
}

export function authPages(apiFetch: ApiFetch) {
  const pages = new Hono<DashboardEnv>();

  pages.get("/login", (c) => showLogin(c, blankForm()));

  pages.post("/login", async (c) => {
    const body = await c.req.parseBody();
    const email = typeof body.email === "string" ? body.email : "";
    const password = typeof body.password === "string" ? body.password : "";
    const values = { email };
    if (!(await loginCsrfMatches(c, typeof body._csrf === "string" ? body._csrf : undefined))) {
      return showLogin(c, { values, errors: { _form: "The form expired; sign in again." } }, 403);
    }
    const api = createApiClient(c, apiFetch, "");
    const result = await api.send<{ securityNotices?: Array<{ message: string }> }>(
      "POST",
      "/api/auth/login",
      {
        email,
        password,
      },
    );
    if (!result.ok) {
      const errors = result.status === 401 ? { password: "Wrong e-mail or password" } : { ...result.fields };
      const status = result.status === 401 || result.status === 429 ? result.status : 400;
      return showLogin(c, { values, errors }, status);
    }
    for (const cookie of result.setCookies) c.header("Set-Cookie", cookie, { append: true });
    const next = safeLocalPath(c.req.query("next"));
    // A lockout since the last sign-in is told here, once (issue 25).
    const notices = (result.data.securityNotices ?? []).map((notice) => notice.message);
    if (notices.length > 0) return redirectWithFlash(c, next, notices.join(" "));
    return c.redirect(next, 303);
  });

  pages.post("/logout", async (c) => {
    const result = await c.var.api.send<unknown>("POST", "/api/auth/logout");
    if (result.ok) for (const cookie of result.setCookies) c.header("Set-Cookie", cookie, { append: true });
    return c.redirect("/login", 303);
  });

  return pages;
}
