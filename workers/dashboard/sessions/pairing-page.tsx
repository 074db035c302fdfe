import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { QrSchema, SessionDetailSchema } from "../../gateway/sessions";
import { ActionButton, blankForm, Field, Form, type FormState } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { redirectWithFlash, render } from "../ui/render";
import { describeMe, fieldOf, pageStatus, sessionApi, sessionPath } from "./shared";

type SessionDetail = z.infer<typeof SessionDetailSchema>;
type Qr = z.infer<typeof QrSchema>;
type Ctx = Context<DashboardEnv>;
type View = "qr" | "connected" | "waiting";

/** States in which nothing happens until someone starts the session. */
const RESTING = new Set<SessionDetail["state"]>(["stopped", "logged_out", "failed"]);

/** The QR shown before the page's script connects; null while there is none (404 from the API). */
async function currentQr(c: Ctx, session: SessionDetail): Promise<string | null> {
  if (session.state !== "scan_qr") return null;
  const qr = await c.var.api.read<Qr>(`${sessionApi(session.sessionId)}/qr`);
  return qr.ok ? qr.data.base64 : null;
}

/** The same rule as the script's, so the first paint matches what the WebSocket will say. */
function viewOf(session: SessionDetail, qrImage: string | null): View {
  if (session.state === "connected") return "connected";
  return qrImage ? "qr" : "waiting";
}

function LiveQr({ session, qrImage }: { session: SessionDetail; qrImage: string | null }) {
  const slug = session.sessionId;
  return (
    <div
      class="qr-box"
      data-session-watch={`${sessionApi(slug)}/events`}
      data-view={viewOf(session, qrImage)}
      aria-live="polite"
    >
      <div class="when-qr">
        <img data-qr alt="QR code to link WhatsApp" src={qrImage ?? undefined} width="264" height="264" />
        <p>Open WhatsApp on your phone → Linked devices → Link a device, and scan this code.</p>
      </div>
      <div class="when-connected">
        <p>
          Connected as <span data-me>{describeMe(session.me)}</span>
        </p>
        <p>
          <a href={sessionPath(slug)}>Open the session page</a>
        </p>
      </div>
      <div class="when-waiting">
        <p>
          Waiting for a QR code…{" "}
          <span data-state>{`${session.status} (${session.state.replace(/_/g, " ")})`}</span>
        </p>
      </div>
    </div>
  );
}

function PairingCode({ code }: { code: string }) {
  return (
    <div class="stack">
      <p>
        On your phone: WhatsApp → Linked devices → Link a device → Link with phone number instead, and enter
        this code:
      </p>
      <div class="copy-row">
        <p id="pairing-code" class="pairing-code">
          {code}
        </p>
        <button type="button" class="secondary" data-copy="pairing-code">
          Copy
        </button>
      </div>
    </div>
  );
}

interface PairingExtras {
  form?: FormState;
  pairingCode?: string;
  alert?: string;
}

async function showPairingPage(
  c: Ctx,
  id: string,
  extras: PairingExtras = {},
  status: ContentfulStatusCode = 200,
) {
  const session = await c.var.api.get<SessionDetail>(sessionApi(id));
  const qrImage = await currentQr(c, session);
  const slug = session.sessionId;
  return render(
    c,
    {
      title: `Pair a phone with ${session.name}`,
      section: "sessions",
      children: (
        <>
          <p class="muted">
            <a href="/sessions">Sessions</a> / <a href={sessionPath(slug)}>{session.name}</a> / Pairing
          </p>
          <section class="panel" aria-labelledby="pair-qr-heading">
            <h2 id="pair-qr-heading">Scan the QR code</h2>
            <LiveQr session={session} qrImage={qrImage} />
            {extras.alert && (
              <p class="alert" role="alert">
                {extras.alert}
              </p>
            )}
            {RESTING.has(session.state) && (
              <div class="actions">
                <p>The session is not running: start it to get a QR code.</p>
                <ActionButton
                  action={`${sessionPath(slug)}/pair/start`}
                  csrf={c.var.csrf}
                  label="Start session"
                />
              </div>
            )}
          </section>
          <section class="panel" aria-labelledby="pair-code-heading">
            <h2 id="pair-code-heading">Or link with a pairing code</h2>
            {extras.pairingCode && <PairingCode code={extras.pairingCode} />}
            <Form
              action={`${sessionPath(slug)}/pair-code`}
              csrf={c.var.csrf}
              form={extras.form ?? blankForm()}
            >
              <Field
                form={extras.form ?? blankForm()}
                name="phoneNumber"
                label="Phone number with country code"
                type="tel"
                autocomplete="tel"
                hint="The phone that will link, e.g. 628123456789. Works while the QR code is showing."
                required
              />
              <div>
                <button type="submit">Get pairing code</button>
              </div>
            </Form>
          </section>
        </>
      ),
    },
    status,
  );
}

export const pairingPage = new Hono<DashboardEnv>();

pairingPage.get("/sessions/:id/pair", (c) => showPairingPage(c, c.req.param("id")));

pairingPage.post("/sessions/:id/pair/start", async (c) => {
  const id = c.req.param("id");
  const result = await c.var.api.send("POST", `${sessionApi(id)}/start`);
  if (!result.ok) return showPairingPage(c, id, { alert: result.error }, pageStatus(result));
  return redirectWithFlash(c, `${sessionPath(id)}/pair`, "Session starting");
});

/** The code is rendered in this response (200), never put in a URL or a cookie. */
pairingPage.post("/sessions/:id/pair-code", async (c) => {
  const id = c.req.param("id");
  const phoneNumber = fieldOf(c.var.form, "phoneNumber");
  const result = await c.var.api.send<{ pairingCode: string }>("POST", `${sessionApi(id)}/pair`, {
    phoneNumber,
  });
  if (!result.ok) {
    // The form has one field: a message that names none (no bridge, already connected) belongs to it.
    const message = result.fields.phoneNumber ?? result.error;
    const form = { values: { phoneNumber }, errors: { phoneNumber: message } };
    return showPairingPage(c, id, { form }, pageStatus(result));
  }
  return showPairingPage(c, id, { form: blankForm({ phoneNumber }), pairingCode: result.data.pairingCode });
});
