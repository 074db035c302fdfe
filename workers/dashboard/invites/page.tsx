import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { InvitePreviewSchema } from "../../control/members";
import { ActionAlert, type BoardContext } from "../ui/board-shared";
import { Form, Time } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { failureStatus, redirectWithFlash, render } from "../ui/render";

type Preview = z.infer<typeof InvitePreviewSchema>;

// ---------------------------------------------------------------------------------------------
// GET /invites/:token (sign in first if needed), POST /invites/:token: join, then the company
// ---------------------------------------------------------------------------------------------

export const invitePage = new Hono<DashboardEnv>();

const apiInvitePath = (token: string) => `/api/member-invites/${encodeURIComponent(token)}`;

const UNUSABLE: Record<Exclude<Preview["state"], "pending">, string> = {
  used: "This invite link was already used. Ask the company's owner for a new one.",
  revoked: "This invite link was revoked. Ask the company's owner for a new one.",
  expired: "This invite link has expired. Ask the company's owner for a new one.",
};

/**
 * Whose machines run the company's agents, named before anyone joins: an owner invite must not
 * quietly mean running someone else's code, and joining never adds the joiner's own runners.
 */
function ServingRunners({ preview }: { preview: Preview }) {
  return (
    <section aria-labelledby="invite-runners">
      <h2 id="invite-runners">Where its agents run</h2>
      {preview.runners.length === 0 ? (
        <p>No runner serves this company yet: its agents wait until one is attached.</p>
      ) : (
        <ul>
          {preview.runners.map((runner) => (
            <li>
              <strong>{runner.name}</strong>, registered by {runner.ownerName}
              {runner.connected ? "" : " (not connected now)"}
            </li>
          ))}
        </ul>
      )}
      <p class="muted">
        Joining does not put the company's agents on your runners, even one that serves every company you
        created.{" "}
        {preview.role === "owner"
          ? "As an owner you may attach one of yours on the company's Runners tab (its agents then run on that machine as its user), and detach any runner from the company there."
          : ""}
      </p>
    </section>
  );
}

/**
 * Joining takes a button press, not just the GET: a link preview or scanner opening the URL must not
 * use up a single-use invite.
 */
async function showInvite(
  c: BoardContext,
  token: string,
  alert?: string,
  status: ContentfulStatusCode = 200,
) {
  const preview = await c.var.api.get<Preview>(apiInvitePath(token));
  return render(
    c,
    {
      title: `Join ${preview.companyName}`,
      section: "companies",
      children: (
        <div class="panel">
          <ActionAlert message={alert} />
          {preview.state === "pending" ? (
            <>
              <p>
                You are invited to join <strong>{preview.companyName}</strong> as{" "}
                {roleWithArticle(preview.role)}. The link works once, until <Time value={preview.expiresAt} />
                .
              </p>
              {preview.email && (
                <p>
                  This invite is for <strong>{preview.email}</strong>
                  {preview.email === c.var.viewer.email ? " (you)" : ": sign in with that account to join"}.
                </p>
              )}
              {preview.note && <p class="muted">Note from the owner: {preview.note}</p>}
              <ServingRunners preview={preview} />
              <Form action={`/invites/${token}`} csrf={c.var.csrf} label="Join the company">
                <div>
                  <button type="submit">Join {preview.companyName}</button>
                </div>
              </Form>
            </>
          ) : (
            <p role="alert">{UNUSABLE[preview.state]}</p>
          )}
        </div>
      ),
    },
    status,
  );
}

invitePage.get("/invites/:token", (c) => showInvite(c, c.req.param("token")));

invitePage.post("/invites/:token", async (c) => {
  const token = c.req.param("token");
  const result = await c.var.api.send<{ companyId: string; companyName: string; role: string }>(
    "POST",
    `${apiInvitePath(token)}/accept`,
  );
  if (result.ok)
    return redirectWithFlash(
      c,
      `/companies/${result.data.companyId}`,
      `You joined ${result.data.companyName} as ${roleWithArticle(result.data.role)}`,
    );
  const preview = await c.var.api.read<Preview>(apiInvitePath(token));
  if (result.status === 409 && preview.ok && preview.data.state === "pending")
    return redirectWithFlash(
      c,
      `/companies/${preview.data.companyId}`,
      "You are already a member of this company",
    );
  return showInvite(c, token, result.error, failureStatus(result));
});

/** "an owner", "an admin", "a member", "a viewer": the role as a sentence reads it. */
function roleWithArticle(role: string): string {
  return /^[aeiou]/.test(role) ? `an ${role}` : `a ${role}`;
}
