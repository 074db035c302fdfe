import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { PageError } from "../ui/api-client";
import type { DashboardEnv } from "../ui/env";
import { failureStatus, redirectWithFlash, render } from "../ui/render";
import {
  companyNumbersOf,
  failedWhatsAppForm,
  fieldIn,
  meApi,
  preferencesBody,
  type WhatsAppFailure,
  WhatsAppPanels,
} from "./whatsapp-panels";

/**
 * "Your phone": the signed-in user's own number on each company's WhatsApp line (issue 28,
 * docs/company-line.md "Your number") — link it, confirm the code, choose what reaches them and when.
 * One panel per company they belong to; every change goes through `…/line/members/me` as them.
 */

type Ctx = Context<DashboardEnv>;

export const PHONE_PATH = "/phone";

async function showPhonePage(c: Ctx, failure?: WhatsAppFailure, code: ContentfulStatusCode = 200) {
  const numbers = await companyNumbersOf(c);
  return render(
    c,
    {
      title: "Your phone",
      section: "phone",
      children: (
        <>
          <p class="muted">
            Each company you belong to can reach you on WhatsApp from its line: approvals to decide, questions
            its agents ask you, budget incidents, failed runs and a daily digest. Answer from the phone (a
            poll vote, a quoted reply, a thumbs-up or thumbs-down); it counts as you, as on this dashboard.
          </p>
          <WhatsAppPanels entries={numbers} csrf={c.var.csrf} failure={failure} />
        </>
      ),
    },
    code,
  );
}

/** What each WhatsApp form sends to the API (whatsapp-panels.tsx), and the flash when it succeeds. */
const WHATSAPP_ACTIONS: Record<
  string,
  {
    method: "PUT" | "POST" | "PATCH" | "DELETE";
    path: (companyId: string) => string;
    body: (companyId: string, form: Record<string, string>) => unknown;
    done: string;
  }
> = {
  number: {
    method: "PUT",
    path: meApi,
    body: (id, form) => ({ phone: (form[fieldIn(id, "phone")] ?? "").trim() }),
    done: "Code sent: enter it below",
  },
  verify: {
    method: "POST",
    path: (id) => `${meApi(id)}/verify`,
    body: (id, form) => ({ code: (form[fieldIn(id, "code")] ?? "").trim() }),
    done: "Number verified",
  },
  preferences: { method: "PATCH", path: meApi, body: preferencesBody, done: "Preferences saved" },
  unlink: { method: "DELETE", path: meApi, body: () => undefined, done: "Number unlinked" },
};

export const phonePage = new Hono<DashboardEnv>();

phonePage.get(PHONE_PATH, (c) => showPhonePage(c));

phonePage.post(`${PHONE_PATH}/:companyId/:action`, async (c) => {
  const action = WHATSAPP_ACTIONS[c.req.param("action")];
  if (!action) throw new PageError(404, "There is no such WhatsApp action.");
  const companyId = c.req.param("companyId");
  const result = await c.var.api.send(
    action.method,
    action.path(companyId),
    action.body(companyId, c.var.form),
  );
  if (!result.ok) {
    return showPhonePage(c, failedWhatsAppForm(companyId, c.var.form, result), failureStatus(result));
  }
  return redirectWithFlash(c, `${PHONE_PATH}#whatsapp-${companyId}-heading`, action.done);
});
