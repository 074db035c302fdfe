// The agents pages in workerd, through the dashboard URLs: the list, an agent's page (status,
// configuration with its revisions and rollback, keys shown once and revoked, budget, recent runs) and
// a run's page with its transcript. Every form: success, and bad input shown next to its field.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { claimOne, openRunnerLink } from "../control/runner-link";
import { asSession, call, createUser, type Session } from "../helpers";
import { eventually } from "../patience";
import { browse, fieldError, formError, submit, textOf, undrawn } from "./helpers";

type Json = Record<string, unknown>;
interface Agent {
  id: string;
  name: string;
  adapterType: string;
  adapterConfig: Json;
  runtimeConfig: Json;
  budgetMonthlyCents: number;
}

let owner: Session & { email: string };
let stranger: Session;
let companyId: string;
let agent: Agent;

const readAgent = async () =>
  (await call<Agent>("GET", `/api/agents/${agent.id}`, { headers: asSession(owner) })).body;
/** The page's alert above its content: a refused one-button action that belongs to no field. */
const alertOf = (html: string) => {
  const match = html.match(/<p class="alert" role="alert">([\s\S]*?)<\/p>/);
  return match?.[1] ? textOf(match[1]) : null;
};
const revisions = async () =>
  (await call<Json[]>("GET", `/api/agents/${agent.id}/config-revisions`, { headers: asSession(owner) })).body;

beforeAll(async () => {
  owner = await createUser("OWNER");
  stranger = await createUser("OWNER");
  const headers = asSession(owner);
  const company = await call<{ id: string }>("POST", "/api/companies", {
    headers,
    body: { name: `Agents Co ${crypto.randomUUID().slice(0, 6)}`, requireBoardApprovalForNewAgents: false },
  });
  companyId = company.body.id;
  const hired = await call<{ agent: Agent }>("POST", `/api/companies/${companyId}/agent-hires`, {
    headers,
    body: { name: "Quill", role: "engineer", adapterType: "process", adapterConfig: { command: "node" } },
  });
  expect(hired.status, JSON.stringify(hired.body)).toBe(201);
  agent = hired.body.agent;
});

describe("agents list and agent page", () => {
  it("lists the company's agents with their status, each linking to its page", async () => {
    const page = await browse(owner, `/companies/${companyId}/agents`);
    expect(page.status).toBe(200);
    expect(page.html).toContain(`<a href="/agents/${agent.id}">Quill</a>`);
    expect(textOf(page.html)).toContain("Quill engineer idle");
  });

  it("shows the agent's status, configuration, budget, keys and runs", async () => {
    const page = await browse(owner, `/agents/${agent.id}`);
    expect(page.status).toBe(200);
    const text = textOf(page.html);
    expect(text).toContain("Status idle");
    expect(text).toContain("Adapter process");
    expect(text).toContain("No runs yet.");
    const config =
      page.html.match(/<textarea id="field-adapterConfig"[^>]*>([\s\S]*?)<\/textarea>/)?.[1] ?? "";
    expect(JSON.parse(textOf(config))).toEqual({ command: "node" });
  });

  it("warns on the page of an agent with nothing to start; one with a command or its own CLI gets none", async () => {
    const hire = async (name: string, adapterType: string) => {
      const hired = await call<{ agent: Agent }>("POST", `/api/companies/${companyId}/agent-hires`, {
        headers: asSession(owner),
        body: { name, role: "engineer", adapterType, adapterConfig: { cwd: "/srv/app" } },
      });
      expect(hired.status, JSON.stringify(hired.body)).toBe(201);
      return textOf((await browse(owner, `/agents/${hired.body.agent.id}`)).html);
    };
    expect(await hire("Blank", "process")).toContain(
      "Adapter process Its runs will fail: adapterConfig.command is not set: a process agent runs the " +
        "program it names, so set it on the agent",
    );
    expect(await hire("Clawd", "claude_local")).not.toContain("Its runs will fail");
    expect(textOf((await browse(owner, `/agents/${agent.id}`)).html)).not.toContain("Its runs will fail");
  });

  it("answers another user's agent, list and run with the API's 404", async () => {
    expect((await browse(stranger, `/agents/${agent.id}`)).status).toBe(404);
    expect((await browse(stranger, `/companies/${companyId}/agents`)).status).toBe(404);
    const denied = await submit(stranger, `/agents/${agent.id}/budget`, { budgetMonthlyCents: "1" });
    expect(denied.status).toBe(404);
    expect((await readAgent()).budgetMonthlyCents).toBe(0);
  });
});

describe("configuration form, revisions and rollback", () => {
  it("saves a new configuration as a revision, and rolls it back", async () => {
    const saved = await submit(owner, `/agents/${agent.id}/config`, {
      adapterType: "process",
      adapterConfig: JSON.stringify({ command: "node", args: ["agent.mjs"] }),
      runtimeConfig: JSON.stringify({ maxConcurrentRuns: 2 }),
    });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/agents/${agent.id}`);
    const after = await readAgent();
    expect(after.adapterConfig).toEqual({ command: "node", args: ["agent.mjs"] });
    expect(after.runtimeConfig).toMatchObject({ maxConcurrentRuns: 2 });

    const [revision] = (await revisions()) as Array<{ id: string }>;
    const page = await browse(owner, `/agents/${agent.id}`);
    const history = page.html.match(/<h2 id="agent-revisions">[\s\S]*?<\/table>/)?.[0] ?? "";
    expect(textOf(history)).toContain("patch (latest) adapterConfig, runtimeConfig You");
    const rolled = await submit(owner, `/agents/${agent.id}/config-revisions/${revision?.id}/rollback`);
    expect(rolled.status).toBe(303);
    expect((await readAgent()).adapterConfig).toEqual({ command: "node" });
    expect((await revisions())[0]).toMatchObject({
      source: "rollback",
      rolledBackFromRevisionId: revision?.id,
    });
  });

  it("shows invalid JSON and a wrong shape next to the field, and changes nothing", async () => {
    const before = await readAgent();
    const count = (await revisions()).length;
    const badJson = await submit(owner, `/agents/${agent.id}/config`, {
      adapterType: "process",
      adapterConfig: "{oops",
      runtimeConfig: "{}",
    });
    expect(badJson.status).toBe(400);
    expect(fieldError(badJson.html, "adapterConfig")).toMatch(/^Not valid JSON/);
    expect(badJson.html).toContain("{oops</textarea>");

    const badShape = await submit(owner, `/agents/${agent.id}/config`, {
      adapterType: "process",
      adapterConfig: JSON.stringify({ args: "not a list" }),
      runtimeConfig: JSON.stringify({ maxConcurrentRuns: 99 }),
    });
    expect(badShape.status).toBe(400);
    expect(fieldError(badShape.html, "adapterConfig") ?? fieldError(badShape.html, "runtimeConfig")).toMatch(
      /args|maxConcurrentRuns/,
    );
    expect(badShape.html).toContain('aria-invalid="true"');
    expect(await readAgent()).toEqual(before);
    expect((await revisions()).length).toBe(count);
  });

  it("refuses to roll back to an unknown or malformed revision, with the API's message, changing nothing", async () => {
    const before = await readAgent();
    const count = (await revisions()).length;
    const unknown = await submit(
      owner,
      `/agents/${agent.id}/config-revisions/${crypto.randomUUID()}/rollback`,
    );
    expect(unknown.status).toBe(404);
    expect(alertOf(unknown.html)).toBe("Config revision not found");
    const malformed = await submit(owner, `/agents/${agent.id}/config-revisions/${"r".repeat(65)}/rollback`);
    expect(malformed.status).toBe(400);
    expect(alertOf(malformed.html)).toMatch(/revisionId/);
    expect(await readAgent()).toEqual(before);
    expect((await revisions()).length).toBe(count);
  });
});

describe("budget form", () => {
  it("saves a budget, and shows a negative one next to the field without saving it", async () => {
    const saved = await submit(owner, `/agents/${agent.id}/budget`, { budgetMonthlyCents: "2500" });
    expect(saved.status).toBe(303);
    expect((await readAgent()).budgetMonthlyCents).toBe(2500);
    expect(textOf((await browse(owner, `/agents/${agent.id}`)).html)).toContain(
      "Spent this month $0.00 of $25.00",
    );

    const bad = await submit(owner, `/agents/${agent.id}/budget`, { budgetMonthlyCents: "-5" });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.html, "budgetMonthlyCents")).toMatch(/>=\s*0|too small|greater/i);
    const words = await submit(owner, `/agents/${agent.id}/budget`, { budgetMonthlyCents: "lots" });
    expect(words.status).toBe(400);
    expect(fieldError(words.html, "budgetMonthlyCents")).toBeTruthy();
    expect((await readAgent()).budgetMonthlyCents).toBe(2500);
  });
});

describe("agent keys", () => {
  it("shows a new key once, lists it, and revokes it", async () => {
    const created = await submit(owner, `/agents/${agent.id}/keys`, { name: "ci" });
    expect(created.status).toBe(200);
    const token = created.html.match(/id="new-agent-key" class="secret" readonly="" value="([^"]+)"/)?.[1];
    expect(token).toMatch(/^swa_/);
    const me = await call<{ id: string }>("GET", "/api/agents/me", {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(me.body.id).toBe(agent.id);

    const later = await browse(owner, `/agents/${agent.id}`);
    expect(later.html).not.toContain(token);
    expect(textOf(later.html)).toContain("ci");
    // The list names who minted each key (issue 25 M-d).
    expect(textOf(later.html)).toContain(`Minted by`);
    expect(textOf(later.html)).toContain(`(${owner.email})`);
    const keys = (
      await call<Array<{ id: string; name: string }>>("GET", `/api/agents/${agent.id}/keys`, {
        headers: asSession(owner),
      })
    ).body;
    const key = keys.find((entry) => entry.name === "ci");
    const revoked = await submit(owner, `/agents/${agent.id}/keys/${key?.id}/revoke`);
    expect(revoked.status).toBe(303);
    const refused = await call("GET", "/api/agents/me", { headers: { Authorization: `Bearer ${token}` } });
    expect(refused.status).toBe(401);
  });

  it("shows a key name that is too long next to the field and creates nothing", async () => {
    const before = (
      await call<unknown[]>("GET", `/api/agents/${agent.id}/keys`, { headers: asSession(owner) })
    ).body.length;
    const bad = await submit(owner, `/agents/${agent.id}/keys`, { name: "k".repeat(101) });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.html, "name")).toBeTruthy();
    expect(bad.html).not.toContain("new-agent-key");
    const after = (
      await call<unknown[]>("GET", `/api/agents/${agent.id}/keys`, { headers: asSession(owner) })
    ).body.length;
    expect(after).toBe(before);
  });

  it("refuses to revoke a key that does not exist, with the API's message", async () => {
    const missing = await submit(owner, `/agents/${agent.id}/keys/no-such-key/revoke`);
    expect(missing.status).toBe(404);
    expect(formError(missing.html) ?? textOf(missing.html)).toContain("Key not found");
  });
});

describe("a run's page", () => {
  it("lists the agent's run and shows its transcript and output", async () => {
    const headers = asSession(owner);
    await env.DB.prepare(
      "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
    ).run();
    const invoked = await call<{ id: string }>("POST", `/api/agents/${agent.id}/heartbeat/invoke`, {
      headers,
    });
    expect(invoked.status, JSON.stringify(invoked.body)).toBe(202);
    const registered = await call<{ token: string }>("POST", `/api/companies/${companyId}/runners`, {
      headers,
      body: { name: "page test" },
    });
    const link = await openRunnerLink(registered.body.token);
    const run = await claimOne(link);
    expect(run.runId).toBe(invoked.body.id);
    const events = [
      { type: "assistant", text: "Reading the inbox." },
      { type: "tool_call", id: "t1", name: "Bash", input: '{"command":"ls"}' },
      { type: "tool_result", toolCallId: "t1", isError: false, output: "README.md" },
    ];
    for (const [seq, event] of events.entries()) link.send({ type: "event", runId: run.runId, seq, event });
    link.send({ type: "log", runId: run.runId, seq: 0, stream: "stdout", text: "listed the files\n" });
    link.send({
      type: "finish",
      runId: run.runId,
      exitCode: 0,
      timedOut: false,
      logFrames: 1,
      eventFrames: 3,
    });
    await eventually(async () => {
      const row = await env.DB.prepare("SELECT status FROM heartbeat_runs WHERE id = ?")
        .bind(run.runId)
        .first();
      return row?.status === "succeeded";
    });

    const agentPage = await browse(owner, `/agents/${agent.id}`);
    expect(agentPage.html).toContain(`<a href="/runs/${run.runId}">Transcript`);
    const runPage = await browse(owner, `/runs/${run.runId}`);
    expect(runPage.status).toBe(200);
    const conversation = runPage.html.match(/<h4>Conversation<\/h4>([\s\S]*?)<\/ol>/)?.[1] ?? "";
    expect(textOf(conversation)).toBe(
      'Agent: Reading the inbox. Tool call Bash: {"command":"ls"} Tool result: README.md',
    );
    expect(runPage.html).toContain(
      '<details class="raw-output"><summary>Raw output (1 line)</summary><pre>listed the files\n</pre></details>',
    );
    // A run invoked by hand has no issue: its page listens for this run on the company's feed, and
    // re-reads itself only while that socket is down (every 30 s), never on a short timer.
    expect(undrawn(runPage.html).match(/<div id="run-live"[^>]*>/)?.[0]).toBe(
      `<div id="run-live" data-live="30" data-live-feed="/api/companies/${companyId}/events?runId=${run.runId}">`,
    );
    expect((await browse(stranger, `/runs/${run.runId}`)).status).toBe(404);
  });
});
