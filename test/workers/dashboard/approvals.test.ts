// The approvals page in workerd, through the dashboard URLs: open requests first with their decision
// form (Approve, Reject, Request revision), then the history; each decision reaches the API's route
// and its effects (a hired agent becomes idle or terminated); refusals show as the form's alert.
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, fieldError, formError, submit, textOf } from "./helpers";

type Json = Record<string, unknown>;
interface Approval {
  id: string;
  status: string;
  decisionNote: string | null;
}

let owner: Session;
let stranger: Session;
let companyId: string;

beforeAll(async () => {
  owner = await createUser("OWNER");
  stranger = await createUser("OWNER");
  const company = await call<{ id: string }>("POST", "/api/companies", {
    headers: asSession(owner),
    body: { name: `Approval Co ${crypto.randomUUID().slice(0, 6)}` },
  });
  companyId = company.body.id;
});

/** A hire request: a pending_approval agent and its pending hire_agent approval. */
async function requestHire(name: string, role = "engineer") {
  const res = await call<{ agent: { id: string }; approval: Approval }>(
    "POST",
    `/api/companies/${companyId}/agent-hires`,
    { headers: asSession(owner), body: { name, role, title: "Helper", adapterType: "coder_local" } },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const approvalOf = async (id: string) =>
  (await call<Approval>("GET", `/api/approvals/${id}`, { headers: asSession(owner) })).body;
const agentStatus = async (id: string) =>
  (await call<Json>("GET", `/api/agents/${id}`, { headers: asSession(owner) })).body.status;
const flashOf = (headers: Headers) => decodeURIComponent(headers.get("set-cookie") ?? "");

/** The `<article>` of the approval whose text contains `needle`. */
function articleWith(html: string, needle: string): string {
  return (
    [...html.matchAll(/<article[\s\S]*?<\/article>/g)].map((m) => m[0]).find((a) => a.includes(needle)) ?? ""
  );
}

const uniqueName = (prefix: string) => `${prefix}${crypto.randomUUID().slice(0, 4)}`;

describe("approvals page", () => {
  it("lists a pending hire with who asked, the agent's role and three decision buttons", async () => {
    const name = uniqueName("Ivy");
    const { approval } = await requestHire(name, "designer");
    const page = await browse(owner, `/companies/${companyId}/approvals`);
    expect(page.status).toBe(200);
    const article = articleWith(page.html, name);
    expect(textOf(article)).toMatch(new RegExp(`Hire ${name} \\(designer\\) pending Requested by You`));
    expect(textOf(article)).toContain("Title Helper Reports to Nobody Adapter coder_local");
    expect(article).toContain(`action="/approvals/${approval.id}/decide"`);
    for (const [value, label] of [
      ["approve", "Approve"],
      ["reject", "Reject"],
      ["request-revision", "Request revision"],
    ])
      expect(article).toMatch(new RegExp(`name="decision" value="${value}"[^>]*>${label}</button>`));
    expect(article).toMatch(/<label for="field-decisionNote-[\w-]+">Decision note \(optional\)<\/label>/);
  });

  it("approves: the approval is approved with the note and the hired agent becomes idle", async () => {
    const name = uniqueName("Jay");
    const { agent, approval } = await requestHire(name);
    const res = await submit(owner, `/approvals/${approval.id}/decide`, {
      decision: "approve",
      decisionNote: "Welcome aboard",
    });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/companies/${companyId}/approvals`);
    expect(flashOf(res.headers)).toContain("Approved");
    expect(await approvalOf(approval.id)).toMatchObject({
      status: "approved",
      decisionNote: "Welcome aboard",
    });
    expect(await agentStatus(agent.id)).toBe("idle");

    const page = await browse(owner, `/companies/${companyId}/approvals`);
    expect(articleWith(page.html, name)).toBe("");
    const history = page.html.match(/<h2 id="approvals-history">[\s\S]*<\/table>/)?.[0] ?? "";
    expect(textOf(history)).toMatch(new RegExp(`Hire ${name} \\(engineer\\) You approved .* Welcome aboard`));
  });

  it("rejects: the approval is rejected and the agent terminated", async () => {
    const { agent, approval } = await requestHire(uniqueName("Kit"));
    const res = await submit(owner, `/approvals/${approval.id}/decide`, { decision: "reject" });
    expect(res.status).toBe(303);
    expect(flashOf(res.headers)).toContain("Rejected");
    expect(await approvalOf(approval.id)).toMatchObject({ status: "rejected", decisionNote: null });
    expect(await agentStatus(agent.id)).toBe("terminated");
  });

  it("requests a revision: the approval waits again, now with only approve and reject", async () => {
    const name = uniqueName("Lou");
    const { agent, approval } = await requestHire(name);
    const res = await submit(owner, `/approvals/${approval.id}/decide`, {
      decision: "request-revision",
      decisionNote: "Lower budget please",
    });
    expect(res.status).toBe(303);
    expect(flashOf(res.headers)).toContain("Revision requested");
    expect(await approvalOf(approval.id)).toMatchObject({
      status: "revision_requested",
      decisionNote: "Lower budget please",
    });
    expect(await agentStatus(agent.id)).toBe("pending_approval");
    const article = articleWith((await browse(owner, `/companies/${companyId}/approvals`)).html, name);
    expect(textOf(article)).toContain("revision requested");
    expect(textOf(article)).toContain("Board note: Lower budget please");
    expect(article).toContain('value="approve"');
    expect(article).not.toContain('value="request-revision"');
  });

  it("shows a refused decision (already decided) as the form's alert and changes nothing", async () => {
    const { agent, approval } = await requestHire(uniqueName("Max"));
    expect((await submit(owner, `/approvals/${approval.id}/decide`, { decision: "approve" })).status).toBe(
      303,
    );
    const res = await submit(owner, `/approvals/${approval.id}/decide`, { decision: "reject" });
    expect(res.status).toBe(422);
    expect(formError(res.html)).toMatch(/Only pending or revision requested approvals can be rejected/);
    expect((await approvalOf(approval.id)).status).toBe("approved");
    expect(await agentStatus(agent.id)).toBe("idle");
  });

  it("shows a note that is too long next to that approval's note and decides nothing", async () => {
    const { approval } = await requestHire(uniqueName("Ned"));
    const res = await submit(owner, `/approvals/${approval.id}/decide`, {
      decision: "approve",
      decisionNote: "x".repeat(10_001),
    });
    expect(res.status).toBe(400);
    expect(fieldError(res.html, `decisionNote-${approval.id}`)).toMatch(/10000|10,000|too big|at most/i);
    expect((await approvalOf(approval.id)).status).toBe("pending");

    const unknown = await submit(owner, `/approvals/${approval.id}/decide`, { decision: "maybe" });
    expect(unknown.status).toBe(400);
    expect(formError(unknown.html)).toBe("Choose Approve, Reject or Request revision.");
    expect((await approvalOf(approval.id)).status).toBe("pending");
  });

  it("shows linked issues and a free-form request's payload", async () => {
    const issue = await call<{ id: string; identifier: string }>(
      "POST",
      `/api/companies/${companyId}/issues`,
      {
        headers: asSession(owner),
        body: { title: "Buy a bigger server" },
      },
    );
    const created = await call<Approval>("POST", `/api/companies/${companyId}/approvals`, {
      headers: asSession(owner),
      body: {
        type: "request_board_approval",
        payload: { title: "More budget", amount: 5000 },
        issueIds: [issue.body.id],
      },
    });
    expect(created.status).toBe(201);
    const article = articleWith(
      (await browse(owner, `/companies/${companyId}/approvals`)).html,
      "More budget",
    );
    expect(textOf(article)).toContain(`request board approval: More budget`);
    expect(textOf(article)).toContain(`Linked issues: ${issue.body.identifier} Buy a bigger server`);
    expect(article).toContain(`href="/issues/${issue.body.id}"`);
    expect(article).toContain("&quot;amount&quot;: 5000");
  });

  it("answers another user's company or approval with the API's 404 and decides nothing", async () => {
    const { approval } = await requestHire(uniqueName("Oz"));
    expect((await browse(stranger, `/companies/${companyId}/approvals`)).status).toBe(404);
    const res = await submit(stranger, `/approvals/${approval.id}/decide`, { decision: "approve" });
    expect(res.status).toBe(404);
    expect((await approvalOf(approval.id)).status).toBe("pending");
  });
});
