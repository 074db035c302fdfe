// Which secrets reach an agent's runs is the board's choice (issue 25, M-c): an agent cannot add or
// change secret references in adapterConfig.env (its own by PATCH or rollback, or a new agent's),
// and a version rotated away is refused at save and never handed to a run.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { eventually } from "../../patience";
import { type BoardUser, seedAgent, seedTwoTenants } from "../helpers";
import { claimOne, runnerFor } from "../runner-link";

type Json = Record<string, unknown>;

beforeEach(async () => {
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
});

async function createSecret(board: BoardUser, companyId: string, name: string, value: string) {
  const res = await call<{ id: string }>("POST", `/api/companies/${companyId}/secrets`, {
    headers: board.headers,
    body: { name, value },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function rotate(board: BoardUser, secretId: string, value: string) {
  const res = await call("PATCH", `/api/secrets/${secretId}`, { headers: board.headers, body: { value } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

const storedConfig = async (agentId: string) =>
  JSON.parse(
    (await env.DB.prepare("SELECT adapter_config FROM agents WHERE id = ?").bind(agentId).first<Json>())
      ?.adapter_config as string,
  ) as Json;

const ref = (secretId: string, version?: number) => ({
  type: "secret_ref",
  secretId,
  ...(version ? { version } : {}),
});

const patchConfig = (headers: Record<string, string>, agentId: string, adapterConfig: Json) =>
  call<Json & { error?: string }>("PATCH", `/api/agents/${agentId}`, { headers, body: { adapterConfig } });

describe("secret bindings", () => {
  it("an agent cannot bind a company secret (403, nothing stored); the board can, and the agent may keep or drop it", async () => {
    const { owner, company, agent } = await seedTwoTenants();
    const secret = await createSecret(owner, company.id, "Payroll Key", `pay-${crypto.randomUUID()}`);
    const before = await storedConfig(agent.id);

    for (const binding of [ref(secret.id), ref(secret.id, 1)]) {
      const self = await patchConfig(agent.headers, agent.id, { ...before, env: { STOLEN: binding } });
      expect(self.status, JSON.stringify(self.body)).toBe(403);
      expect(self.body.error).toContain("Only board users bind company secrets");
      expect(self.body.error).toContain("STOLEN");
      expect(await storedConfig(agent.id)).toEqual(before);
    }
    // A CEO agent cannot hand one to a new agent either (directly or through a hire).
    const ceo = await seedAgent(company.id, { name: "Chief", role: "ceo" });
    for (const path of [`/api/companies/${company.id}/agents`, `/api/companies/${company.id}/agent-hires`]) {
      const created = await call("POST", path, {
        headers: ceo.headers,
        body: {
          name: `Minion ${crypto.randomUUID().slice(0, 6)}`,
          role: "engineer",
          adapterType: "process",
          adapterConfig: { command: "true", env: { STOLEN: ref(secret.id) } },
        },
      });
      expect(created.status, `${path} ${JSON.stringify(created.body)}`).toBe(403);
      expect(JSON.stringify(created.body)).toContain("Only board users bind company secrets");
    }

    const byBoard = await patchConfig(owner.headers, agent.id, { ...before, env: { PAY: ref(secret.id) } });
    expect(byBoard.status, JSON.stringify(byBoard.body)).toBe(200);
    // The agent writes back its (redacted) configuration with another change: the binding stays.
    const read = await call<{ adapterConfig: Json }>("GET", `/api/agents/${agent.id}/configuration`, {
      headers: agent.headers,
    });
    const kept = await patchConfig(agent.headers, agent.id, { ...read.body.adapterConfig, model: "m-2" });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    expect((await storedConfig(agent.id)).env).toEqual({ PAY: ref(secret.id) });
    // Moving the binding to another variable is binding anew.
    const moved = await patchConfig(agent.headers, agent.id, { ...before, env: { OTHER: ref(secret.id) } });
    expect(moved.status).toBe(403);
    const dropped = await patchConfig(agent.headers, agent.id, { ...before, model: "m-2" });
    expect(dropped.status, JSON.stringify(dropped.body)).toBe(200);
    expect((await storedConfig(agent.id)).env).toBeUndefined();

    // Rolling back the drop would bind it again: refused to the agent as well.
    const revisions = await call<Array<{ id: string; afterConfig: { adapterConfig: Json } }>>(
      "GET",
      `/api/agents/${agent.id}/config-revisions`,
      { headers: owner.headers },
    );
    const drop = revisions.body.find((revision) => revision.afterConfig.adapterConfig.env === undefined);
    expect(drop).toBeDefined();
    const rollback = await call("POST", `/api/agents/${agent.id}/config-revisions/${drop?.id}/rollback`, {
      headers: agent.headers,
    });
    expect(rollback.status, JSON.stringify(rollback.body)).toBe(403);
    expect((await storedConfig(agent.id)).env).toBeUndefined();
  });

  it("a CEO agent cannot bind one through a package import (403, no agent created)", async () => {
    const { owner, company } = await seedTwoTenants();
    const secret = await createSecret(owner, company.id, "Vault", `vault-${crypto.randomUUID()}`);
    const ceo = await seedAgent(company.id, { name: "Chief", role: "ceo" });
    const files = {
      "COMPANY.md": "---\nname: Smuggle Co\nschema: agentcompanies/v1\n---\n\nImported.\n",
      "agents/mole/AGENTS.md": "---\nname: Mole\n---\n\nYou dig.\n",
      ".switchboard.yaml": [
        "schema: switchboard/v1",
        "agents:",
        "  mole:",
        "    role: engineer",
        "    adapterConfig:",
        "      command: 'true'",
        "      env:",
        "        LOOT:",
        "          type: secret_ref",
        `          secretId: ${secret.id}`,
        "",
      ].join("\n"),
    };
    const body = {
      source: { type: "inline", files },
      target: { mode: "existing_company", companyId: company.id },
    };
    for (const step of ["preview", "apply"]) {
      const res = await call("POST", `/api/companies/${company.id}/imports/${step}`, {
        headers: ceo.headers,
        body,
      });
      expect(res.status, `${step} ${JSON.stringify(res.body)}`).toBe(403);
      expect(JSON.stringify(res.body)).toContain("mole");
    }
    const moles = await env.DB.prepare(
      "SELECT count(*) AS n FROM agents WHERE company_id = ? AND name = 'Mole'",
    )
      .bind(company.id)
      .first<{ n: number }>();
    expect(moles?.n).toBe(0);
    // The board may import it (the agent arrives paused, for the board to review).
    const byBoard = await call("POST", `/api/companies/${company.id}/imports/apply`, {
      headers: owner.headers,
      body,
    });
    expect(byBoard.status, JSON.stringify(byBoard.body)).toBe(201);
  });

  it("refuses a version rotated away at save (400) and never hands one to a run", async () => {
    const { owner, company, agent, other, outsider } = await seedTwoTenants();
    const values = [1, 2, 3].map((n) => `rot${n}-${crypto.randomUUID()}`);
    const secret = await createSecret(owner, company.id, "Rotating", values[0] ?? "");
    await rotate(owner, secret.id, values[1] ?? "");
    const theirs = await createSecret(outsider, other.id, "Theirs", `their-${crypto.randomUUID()}`);

    const pinnedOld = await patchConfig(owner.headers, agent.id, {
      command: "true",
      env: { T: ref(secret.id, 1) },
    });
    expect(pinnedOld.status, JSON.stringify(pinnedOld.body)).toBe(400);
    expect(pinnedOld.body.error).toContain("rotated away");
    const foreign = await patchConfig(owner.headers, agent.id, {
      command: "true",
      env: { T: ref(theirs.id) },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toContain("does not exist in this company");
    const pinned = await patchConfig(owner.headers, agent.id, {
      command: "true",
      env: { T: ref(secret.id, 2) },
    });
    expect(pinned.status, JSON.stringify(pinned.body)).toBe(200);

    // Rotated after it was pinned: the run fails with a configuration error instead of getting v2.
    await rotate(owner, secret.id, values[2] ?? "");
    const follower = await seedAgent(company.id, {
      name: "Follower",
      adapterConfig: { command: "true", env: { T: ref(secret.id) } },
    });
    const invoke = async (agentId: string) => {
      const res = await call<{ id: string }>("POST", `/api/agents/${agentId}/heartbeat/invoke`, {
        headers: owner.headers,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      return res.body.id;
    };
    const pinnedRun = await invoke(agent.id);
    const followerRun = await invoke(follower.id);
    const runner = await runnerFor(owner, company.id);
    const handed = await claimOne(runner);
    expect(handed.runId).toBe(followerRun);
    expect(handed.env.T).toBe(values[2]);
    const failed = async () =>
      await env.DB.prepare("SELECT status, error_reason FROM heartbeat_runs WHERE id = ?")
        .bind(pinnedRun)
        .first<{ status: string; error_reason: string }>();
    await eventually(async () => (await failed())?.status === "failed");
    expect((await failed())?.error_reason).toContain("version 2 of secret");
    expect((await failed())?.error_reason).toContain("rotated away");
    // No frame the runner received carries a rotated-away value.
    const received = JSON.stringify(runner.frames);
    expect(received).not.toContain(values[0]);
    expect(received).not.toContain(values[1]);
    runner.socket.close(1000, "done");
  });
});
