import { Hono } from "hono";
import { agentApiPath, showAgent } from "../agents/pages";
import type { AgentDetail } from "../agents/views";
import { issueApiPath } from "../issues/model-views";
import { type IssueDetail, showIssue } from "../issues/view";
import { showProjects } from "../projects/pages";
import { showRoutines } from "../routines/pages";
import type { ApiResult } from "../ui/api-client";
import { type BoardContext, refusalView } from "../ui/board-shared";
import type { DashboardEnv } from "../ui/env";
import { failureStatus, redirectWithFlash } from "../ui/render";

// ---------------------------------------------------------------------------------------------
// Delete (and, for agents, Terminate first) for issues, agents, projects, goals and routines: one API
// DELETE each, as the signed-in person, so the API's rules decide (viewers 403; an agent that is not
// terminated, or still has open issues or routines, 409; a project routines use, 409). A refusal
// re-renders the page the button was on with the API's message next to that button.
// ---------------------------------------------------------------------------------------------

export const deletePages = new Hono<DashboardEnv>();

type Refused = ApiResult<unknown> & { ok: false };

/** The page's own view of the refusal, with the API's status. */
const refused = (result: Refused, name: string) => ({
  ...refusalView(result, name),
  status: failureStatus(result),
});

/** Reads what is about to go (its name and company for the answer); another tenant's is the API's 404. */
const read = <T,>(c: BoardContext, path: string) => c.var.api.get<T>(path);

deletePages.post("/issues/:issueId/delete", async (c) => {
  const issue = await read<IssueDetail>(c, issueApiPath(c.req.param("issueId")));
  const result = await c.var.api.send("DELETE", issueApiPath(issue.id));
  if (!result.ok) return showIssue(c, issue.id, refused(result, `delete-${issue.id}`));
  return redirectWithFlash(c, `/companies/${issue.companyId}/issues`, `Issue ${issue.identifier} deleted`);
});

deletePages.post("/agents/:agentId/terminate", async (c) => {
  const agent = await read<AgentDetail>(c, agentApiPath(c.req.param("agentId")));
  const result = await c.var.api.send("POST", `${agentApiPath(agent.id)}/terminate`);
  if (!result.ok) return showAgent(c, agent.id, refused(result, `remove-${agent.id}`));
  return redirectWithFlash(c, `/agents/${agent.id}`, `${agent.name} terminated`);
});

deletePages.post("/agents/:agentId/delete", async (c) => {
  const agent = await read<AgentDetail>(c, agentApiPath(c.req.param("agentId")));
  const result = await c.var.api.send("DELETE", agentApiPath(agent.id));
  if (!result.ok) return showAgent(c, agent.id, refused(result, `remove-${agent.id}`));
  return redirectWithFlash(c, `/companies/${agent.companyId}/agents`, `${agent.name} deleted`);
});

/** Projects and goals are deleted from the projects page, and return to it. */
for (const kind of ["project", "goal"] as const) {
  deletePages.post(`/${kind}s/:id/delete`, async (c) => {
    const path = `/api/${kind}s/${encodeURIComponent(c.req.param("id"))}`;
    const thing = await read<{ id: string; companyId: string; name?: string; title?: string }>(c, path);
    const result = await c.var.api.send("DELETE", path);
    if (!result.ok) return showProjects(c, thing.companyId, refused(result, `delete-${thing.id}`));
    const label = kind === "project" ? `Project ${thing.name}` : `Goal ${thing.title}`;
    return redirectWithFlash(c, `/companies/${thing.companyId}/projects`, `${label} deleted`);
  });
}

deletePages.post("/routines/:routineId/delete", async (c) => {
  const path = `/api/routines/${encodeURIComponent(c.req.param("routineId"))}`;
  const routine = await read<{ id: string; companyId: string; title: string }>(c, path);
  const result = await c.var.api.send("DELETE", path);
  if (!result.ok) return showRoutines(c, routine.companyId, refused(result, `delete-${routine.id}`));
  return redirectWithFlash(c, `/companies/${routine.companyId}/routines`, `Routine ${routine.title} deleted`);
});
