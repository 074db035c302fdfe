import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { apiCompanyPath, type BoardContext, companyNav, loadCompany } from "../ui/board-shared";
import {
  ActionButton,
  blankForm,
  DataTable,
  EmptyState,
  Form,
  SelectField,
  StatusBadge,
  Time,
} from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { loadMyRole } from "../ui/member-shared";
import { failureStatus, redirectWithFlash, render } from "../ui/render";

// ---------------------------------------------------------------------------------------------
// GET /companies/:id/runners: the runners that run the company's agents. Any owner detaches any of
// them; an owner attaches one of their own (the only way a company they joined by invite gets run
// on their machine). POST …/runners/attach, POST …/runners/:runnerId/detach.
// ---------------------------------------------------------------------------------------------

/** GET /api/companies/{id}/runners and /api/runners (control/runners/schemas.ts RunnerSchema), in part. */
interface Runner {
  id: string;
  name: string;
  ownerUserId: string;
  companyIds: string[];
  connected: boolean;
  lastSeenAt: string | null;
  revokedAt: string | null;
}

export const companyRunnerPage = new Hono<DashboardEnv>();

const pagePath = (companyId: string) => `/companies/${encodeURIComponent(companyId)}/runners`;

interface RunnersView {
  alert?: string;
  status?: ContentfulStatusCode;
}

function ServingTable(props: {
  companyId: string;
  runners: Runner[];
  viewerId: string;
  owner: boolean;
  csrf: string;
}) {
  if (props.runners.length === 0)
    return (
      <EmptyState>No runner serves this company: its agents' runs wait until one is attached.</EmptyState>
    );
  return (
    <DataTable
      headings={["Runner", "Registered by", "State", "Last seen", ...(props.owner ? ["Detach"] : [])]}
    >
      {props.runners.map((runner) => (
        <tr>
          <td>{runner.name}</td>
          <td>{runner.ownerUserId === props.viewerId ? "you" : "another owner"}</td>
          <td>
            <StatusBadge status={runner.connected ? "connected" : "Disconnected"} />
          </td>
          <td>
            <Time value={runner.lastSeenAt} />
          </td>
          {props.owner && (
            <td>
              <ActionButton
                action={`${pagePath(props.companyId)}/${runner.id}/detach`}
                csrf={props.csrf}
                label="Detach"
                name={`Detach ${runner.name}`}
                variant="danger"
                confirm={`Stop ${runner.name} running this company's agents?`}
              />
            </td>
          )}
        </tr>
      ))}
    </DataTable>
  );
}

async function showRunners(c: BoardContext, companyId: string, view: RunnersView = {}) {
  const company = await loadCompany(c, companyId);
  const base = apiCompanyPath(company.id);
  const [serving, role, mine] = await Promise.all([
    c.var.api.get<Runner[]>(`${base}/runners`),
    loadMyRole(c, company.id),
    c.var.api.get<Runner[]>("/api/runners"),
  ]);
  const owner = role === "owner";
  const attachable = mine.filter((runner) => !runner.revokedAt && !runner.companyIds.includes(company.id));
  return render(
    c,
    {
      title: `${company.name}: runners`,
      section: "companies",
      company: companyNav(company, "runners"),
      children: (
        <>
          {view.alert && (
            <p class="alert" role="alert">
              {view.alert}
            </p>
          )}
          <section aria-labelledby="company-runners">
            <h2 id="company-runners">Runners serving this company</h2>
            <p class="muted">
              The company's agents run on these machines, as their users. Any owner can detach any of them.
            </p>
            <ServingTable
              companyId={company.id}
              runners={serving}
              viewerId={c.var.viewer.id}
              owner={owner}
              csrf={c.var.csrf}
            />
          </section>
          {owner && attachable.length > 0 && (
            <section class="panel" aria-labelledby="company-runners-attach">
              <h2 id="company-runners-attach">Run its agents on one of your runners</h2>
              <Form action={`${pagePath(company.id)}/attach`} csrf={c.var.csrf} label="Attach a runner">
                <SelectField
                  form={blankForm()}
                  name="runnerId"
                  label="Your runner"
                  hint="The company's agents then run on that machine as its user, with this company's secrets."
                  options={attachable.map((runner) => ({ value: runner.id, label: runner.name }))}
                  required
                />
                <div>
                  <button type="submit">Attach runner</button>
                </div>
              </Form>
            </section>
          )}
        </>
      ),
    },
    view.status ?? 200,
  );
}

companyRunnerPage.get("/companies/:companyId/runners", (c) => showRunners(c, c.req.param("companyId")));

companyRunnerPage.post("/companies/:companyId/runners/attach", async (c) => {
  const companyId = c.req.param("companyId");
  const runnerId = encodeURIComponent(c.var.form.runnerId ?? "");
  const result = await c.var.api.send<Runner>("PUT", `${apiCompanyPath(companyId)}/runners/${runnerId}`);
  if (!result.ok) return showRunners(c, companyId, { alert: result.error, status: failureStatus(result) });
  return redirectWithFlash(c, pagePath(companyId), `${result.data.name} now runs this company's agents`);
});

companyRunnerPage.post("/companies/:companyId/runners/:runnerId/detach", async (c) => {
  const { companyId, runnerId } = c.req.param();
  const result = await c.var.api.send(
    "DELETE",
    `${apiCompanyPath(companyId)}/runners/${encodeURIComponent(runnerId)}`,
  );
  if (!result.ok) return showRunners(c, companyId, { alert: result.error, status: failureStatus(result) });
  return redirectWithFlash(c, pagePath(companyId), "Runner detached");
});
