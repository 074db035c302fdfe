// The checkout race, through the Worker in workerd: many agents claiming one todo issue at once must
// produce exactly one owner, every loser must be told who won, and the stored assignee must agree.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { applyIssueOperation } from "../../../../workers/control/issues/apply";
import { database } from "../../../../workers/db/client";
import { BASE, dispatch as dispatchRequest } from "../../helpers";
import {
  activityOf,
  boardUser,
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  seedCompany,
  seedIssue,
} from "../helpers";

interface CheckoutAnswer {
  assigneeAgentId: string | null;
  error: string;
  details: { assigneeAgentId: string | null; holder: { id: string; name: string | null } | null };
}

const assigneeOf = (id: string) =>
  env.DB.prepare("SELECT assignee_agent_id FROM issues WHERE id = ?")
    .bind(id)
    .first<{ assignee_agent_id: string | null }>()
    .then((row) => row?.assignee_agent_id);

/** The agents every round draws its contenders from, created once. */
const RACE_POOL = 50;
const RANDOM_ROUNDS = 100;

/**
 * The race sends thousands of requests. Under vitest-pool-workers each `SELF.fetch` gets slower the
 * more came before it in the same workerd (cloudflare/workers-sdk#15446: ~6 ms → hundreds of ms), so
 * the race hands its requests to the Worker's own fetch handler in this isolate instead: the same
 * app, middleware, IssueDO and D1, without the harness's per-request overhead.
 */
async function dispatch(path: string, headers: Record<string, string>, body: unknown) {
  const request = new Request(`${BASE}${path}`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const response = await dispatchRequest(request);
  const parsed = (await response.json()) as CheckoutAnswer;
  return { status: response.status, body: parsed };
}

function sample<T>(items: readonly T[], n: number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy.slice(0, n);
}

/** n agents POST checkout on one fresh todo issue at once: exactly one wins, the rest see it. */
async function raceRound(raceCompany: SeededCompany, pool: readonly SeededAgent[], n: number) {
  const issue = await seedIssue(raceCompany);
  const contenders = sample(pool, n);
  const results = await Promise.all(
    contenders.map((agent) =>
      dispatch(`/api/issues/${issue.id}/checkout`, agent.headers, {
        agentId: agent.id,
        expectedStatuses: ["todo"],
      }),
    ),
  );
  const statuses = results.map((res) => res.status);
  const winners = contenders.filter((_, i) => statuses[i] === 200);
  expect(winners.length, `round of ${n}: ${JSON.stringify(statuses)}`).toBe(1);
  expect(statuses.filter((status) => status === 409).length).toBe(n - 1);
  const winner = winners[0] as SeededAgent;
  expect(await assigneeOf(issue.id)).toBe(winner.id);
  for (const res of results) {
    if (res.status === 200) {
      expect(res.body.assigneeAgentId).toBe(winner.id);
      continue;
    }
    expect(res.body.error).toBe("Issue checkout conflict");
    expect(res.body.details.assigneeAgentId).toBe(winner.id);
    expect(res.body.details.holder?.id).toBe(winner.id);
  }
  expect(await activityOf(issue.id)).toEqual([
    { action: "issue.checked_out", actor_type: "agent", actor_id: winner.id },
  ]);
}

describe("the checkout race", () => {
  let raceCompany: SeededCompany;
  let pool: SeededAgent[];

  beforeAll(async () => {
    raceCompany = await seedCompany(await boardUser());
    pool = [];
    for (let i = 0; i < RACE_POOL; i++) pool.push(await seedAgent(raceCompany.id));
  }, 60_000);

  it("50 agents at once: exactly one 200, 49 × 409 naming the winner", async () => {
    await raceRound(raceCompany, pool, RACE_POOL);
  }, 30_000);

  it("100 rounds of 2..50 agents: always exactly one owner", async () => {
    for (let round = 0; round < RANDOM_ROUNDS; round++) {
      await raceRound(raceCompany, pool, 2 + Math.floor(Math.random() * (RACE_POOL - 1)));
    }
  }, 180_000);

  it("holds without the IssueDO queue too: the guarded UPDATE lets one claim through, logs one", async () => {
    const db = database(env.DB);
    for (let round = 0; round < 5; round++) {
      const issue = await seedIssue(raceCompany);
      const contenders = sample(pool, 20);
      // Straight into the handler, all at once: every one reads the issue as todo and unassigned.
      const outcomes = await Promise.all(
        contenders.map((agent) =>
          applyIssueOperation(
            db,
            { id: issue.id, companyId: raceCompany.id },
            {
              kind: "checkout",
              actor: { type: "agent", agentId: agent.id, companyId: raceCompany.id },
              input: { agentId: agent.id, expectedStatuses: ["todo"] },
            },
          ),
        ),
      );
      const won = contenders.filter((_, i) => outcomes[i]?.ok);
      expect(won.length).toBe(1);
      expect(outcomes.filter((outcome) => !outcome.ok && outcome.status === 409).length).toBe(19);
      expect(await assigneeOf(issue.id)).toBe(won[0]?.id);
      expect((await activityOf(issue.id)).length).toBe(1);
    }
  });
});
