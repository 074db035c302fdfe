import { Hono } from "hono";
import type { DashboardEnv, FormFields } from "../ui/env";
import { failureStatus, redirectWithFlash } from "../ui/render";
import type { BoardIssue } from "./board-card";
import { showBoard } from "./board-page";
import { showIssue } from "./view";

/**
 * POST /issues/:issueId/quick-edit: the board card's Edit menu and its drag between columns. One PATCH
 * of the issue through the API (so the transition table, permissions and tenancy decide, as for any
 * client). Without script the browser is sent back to the board, or shown it with the refusal on top;
 * the board's script posts with `X-Dashboard-Fetch: 1` and gets `{ok, message}` to show in place.
 */
export const quickEditPage = new Hono<DashboardEnv>();

type Patch = Record<string, string | string[] | null>;

/** `agent:<id>`, `user:<id>` or "" (nobody), as the card's select offers them. */
function assigneePatch(value: string | undefined): Patch {
  if (value === undefined) return {};
  if (value.startsWith("agent:")) return { assigneeAgentId: value.slice("agent:".length) };
  if (value.startsWith("user:")) return { assigneeUserId: value.slice("user:".length) };
  return { assigneeAgentId: null, assigneeUserId: null };
}

/** Labels are checkboxes named `label:<id>`; `labelsShown` says the form had them (none ticked = none). */
function labelsPatch(fields: FormFields): Patch {
  if (fields.labelsShown !== "1") return {};
  const ids = Object.keys(fields)
    .filter((name) => name.startsWith("label:") && fields[name] === "1")
    .map((name) => name.slice("label:".length));
  return { labelIds: ids };
}

/** Only what the form sent: a drag sends its status alone. */
export function quickEditPatch(fields: FormFields): Patch {
  const patch: Patch = { ...assigneePatch(fields.assignee), ...labelsPatch(fields) };
  if (fields.status) patch.status = fields.status;
  if (fields.priority) patch.priority = fields.priority;
  if (fields.dueDate !== undefined) patch.dueDate = fields.dueDate === "" ? null : fields.dueDate;
  // The issue page's note: a comment in the same PATCH (the reason "blocked" needs, for one).
  if (fields.comment?.trim()) patch.comment = fields.comment;
  return patch;
}

quickEditPage.post("/issues/:issueId/quick-edit", async (c) => {
  const issueId = c.req.param("issueId");
  const result = await c.var.api.send<BoardIssue>(
    "PATCH",
    `/api/issues/${encodeURIComponent(issueId)}`,
    quickEditPatch(c.var.form),
  );
  const scripted = c.req.header("X-Dashboard-Fetch") === "1";
  if (scripted) {
    return result.ok
      ? c.json({ ok: true, message: `${result.data.identifier} saved` }, 200)
      : c.json({ ok: false, message: result.error }, failureStatus(result));
  }
  const toIssue = c.var.form.back === "issue";
  if (!result.ok && toIssue)
    return showIssue(c, issueId, {
      alert: `Not changed: ${result.error}`,
      status: failureStatus(result),
      note: c.var.form.comment,
    });
  if (!result.ok) {
    const companyId = c.var.form.companyId;
    if (!companyId) return c.text(result.error, failureStatus(result));
    return showBoard(
      c,
      companyId,
      {},
      { alert: `Not changed: ${result.error}`, status: failureStatus(result) },
    );
  }
  const back = toIssue ? `/issues/${result.data.id}` : `/companies/${result.data.companyId}/issues`;
  return redirectWithFlash(c, back, `${result.data.identifier} saved`);
});
