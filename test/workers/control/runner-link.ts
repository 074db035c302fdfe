// Runners for workerd suites: registered through the API by a company owner, dialled over a real
// WebSocket to /runner/v1/link with their token, as a runner process would.
import { SELF } from "cloudflare:test";
import type { RunnerFrame, RunSkill } from "../../../bridge/src/protocol/runner";
import { Link } from "../fake-bridge";
import { BASE, call } from "../helpers";
import type { BoardUser } from "./helpers";

export type RunAssignment = {
  runId: string;
  agentId: string;
  command: string;
  args: string[];
  prompt: string;
  env: Record<string, string>;
  adapterConfig?: Record<string, unknown>;
  skills?: RunSkill[];
  budgetCents?: number;
};

type RunnerHello = Extract<RunnerFrame, { type: "hello" }>;

export interface RegisteredRunner {
  id: string;
  token: string;
}

/** Registers a runner for `companyId` as `owner` (who must own it). */
export async function registerRunner(owner: BoardUser, companyId: string): Promise<RegisteredRunner> {
  const res = await call<{ runner: { id: string }; token: string }>(
    "POST",
    `/api/companies/${companyId}/runners`,
    {
      headers: owner.headers,
      body: { name: "test runner" },
    },
  );
  if (res.status !== 201) throw new Error(`registering a runner: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.runner.id, token: res.body.token };
}

export function dialRunner(token: string): Promise<Response> {
  return SELF.fetch(`${BASE}/runner/v1/link`, {
    headers: { Upgrade: "websocket", Authorization: `Bearer ${token}` },
  });
}

/** The hello a runner sends when its link opens, and again with the CLIs it found (`clis`). */
export function sayHello(link: Link, clis?: RunnerHello["clis"]): void {
  link.send({
    type: "hello",
    version: "test",
    slots: 2,
    platform: "linux",
    arch: "x64",
    node: "v20",
    runAs: null,
    ...(clis ? { clis } : {}),
  } satisfies RunnerHello);
}

/** An open runner link that said hello, as a runner does when it connects. */
export async function openRunnerLink(token: string): Promise<Link> {
  const res = await dialRunner(token);
  if (!res.webSocket) throw new Error(`runner upgrade failed: ${res.status}`);
  const link = new Link(res.webSocket);
  sayHello(link);
  return link;
}

/** A runner registered by `owner` for `companyId`, connected. */
export async function runnerFor(owner: BoardUser, companyId: string): Promise<Link> {
  return openRunnerLink((await registerRunner(owner, companyId)).token);
}

/** Claims and waits for a run this link has not been handed before. */
export async function claimOne(link: Link): Promise<RunAssignment> {
  const seen = new Set(
    link.frames.filter((f) => f.type === "run").map((f) => (f.run as RunAssignment).runId),
  );
  link.send({ type: "claim", slots: 1 });
  const frame = await link.next((f) => f.type === "run" && !seen.has((f.run as RunAssignment).runId));
  return frame.run as RunAssignment;
}
