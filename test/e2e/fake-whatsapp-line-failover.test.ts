// Issue 28's reliability on real Baileys against the fake WhatsApp, with real bridge processes killed
// (SIGKILL) under the company's line: the bridge holding the line dies the moment the owner's vote
// reaches it — before its receipt reaches WhatsApp, so WhatsApp keeps the vote — and the next bridge
// gets it from WhatsApp's offline queue: the hire is approved exactly once, with one confirmation.
// Then, with no bridge holding the line, the owner answers a question by a quoted reply; WhatsApp
// keeps it, and the bridge that takes the line next delivers it: the question is answered.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../support/api.ts";
import { type BridgeProcess, createBridgeCredential, startBridgeProcess } from "../support/bridge-process.ts";
import {
  type Approval,
  agentAsks,
  agentWithKey,
  answeredQuestion,
  asAgent,
  lineWithVerifiedOwner,
  pollOn,
  replyQuoting,
} from "../support/company-line.ts";
import { type FakeWhatsAppStack, startFakeWhatsAppStack } from "../support/fake-whatsapp-stack.ts";

let world: FakeWhatsAppStack;
const bridges: BridgeProcess[] = [];

beforeAll(async () => {
  // No bridge of npm start's own: this suite runs (and kills) its bridges; a dead one's sessions move
  // after 1.5 s.
  world = await startFakeWhatsAppStack({ BRIDGE: "0", FLEET_GRACE_MS: "1500" });
  await startBridge("line-a");
}, 180_000);

afterAll(async () => {
  for (const bridge of bridges) await bridge.kill("SIGTERM");
  await world?.stop();
});

async function startBridge(id: string): Promise<BridgeProcess> {
  const token = await createBridgeCredential(world.api, id);
  const bridge = startBridgeProcess(world.stack.baseUrl, id, token, {
    ...world.bridgeEnv,
    LOG_LEVEL: "info",
  });
  bridges.push(bridge);
  await eventually(
    async () => (bridge.lines.some((line) => line.includes("fleet link open")) ? true : undefined),
    30_000,
    `bridge ${id} linked to the fleet`,
  );
  return bridge;
}

/** The bridge process holding `sid` now (its log says it opened WhatsApp for it last). */
function holderOf(sessionId: string): BridgeProcess {
  const holder = bridges.find(
    (bridge) =>
      bridge.child.exitCode === null &&
      bridge.child.signalCode === null &&
      bridge.lines.some((line) => line.includes('"whatsapp opening"') && line.includes(sessionId)),
  );
  if (!holder) throw new Error(`no live bridge holds ${sessionId}`);
  return holder;
}

const texts = (phone: { inbox: Array<{ text?: string | null }> }) =>
  phone.inbox.map((message) => message.text ?? "");

describe("the company's line across bridge failures", () => {
  it("the bridge dies as the owner's vote reaches it; the next bridge applies it exactly once", async () => {
    const { api, whatsapp } = world;
    const { sid, line, companyId, phone } = await lineWithVerifiedOwner(
      world,
      "4915550009000",
      "4915550009111",
    );
    const internal = (await api.call<{ data: { id: string } }>("GET", `/api/sessions/${sid}`)).body.data.id;
    const ceo = await agentWithKey(world, companyId, { name: "Ceo", role: "ceo" });
    const hired = await asAgent(world, ceo.headers, "POST", `/api/companies/${companyId}/agent-hires`, {
      name: "Analyst",
      role: "designer",
      adapterType: "coder_local",
    });
    const hire = (await hired.json()) as { agent: { id: string }; approval: Approval };
    expect(hired.status, JSON.stringify(hire)).toBe(201);
    const poll = await pollOn(phone, "Analyst");

    // The holder is killed the instant WhatsApp hands it the vote; its receipt never reaches WhatsApp.
    const holder = holderOf(internal);
    whatsapp.offline.ignore(line.jid);
    let killed = false;
    whatsapp.deliveryHooks.push((jid, node) => {
      if (killed || jid !== line.jid || node.tag !== "message") return;
      killed = true;
      holder.child.kill("SIGKILL");
    });
    await phone.sendPollVote(line, poll, ["Approve"]);
    await holder.kill("SIGKILL");
    expect(killed).toBe(true);
    whatsapp.offline.hear(line.jid);
    expect(whatsapp.offline.count(line.jid)).toBeGreaterThan(0);

    await startBridge("line-b");
    const decided = await eventually(
      async () => {
        const approval = await api.call<Approval>("GET", `/api/approvals/${hire.approval.id}`);
        return approval.body.status === "approved" ? approval.body : undefined;
      },
      90_000,
      "the hire approved after the failover",
    );
    expect(decided.decidedByUserId).not.toBeNull();
    await eventually(
      async () => (whatsapp.offline.count(line.jid) === 0 ? true : undefined),
      30_000,
      "the vote acknowledged by the new bridge",
    );

    // A barrier: a later answer to the same poll is handled after the redelivered vote.
    await replyQuoting(phone, line, poll, "approve");
    // As patient as the failover wait above: in a loaded CI run (two cores, a browser suite beside it)
    // this reply once took longer than 30 s to make the round trip through the new bridge.
    await eventually(
      async () => (texts(phone).some((text) => text.startsWith("Already approved")) ? true : undefined),
      90_000,
      "the line saying it is already approved",
    );
    expect(texts(phone).filter((text) => text.startsWith("Approved"))).toHaveLength(1);
    const activity = await api.call<Array<{ action: string; entityId: string; details: { via?: string } }>>(
      "GET",
      `/api/companies/${companyId}/activity`,
    );
    const approvals = activity.body.filter(
      (entry) => entry.entityId === hire.approval.id && entry.action === "approval.approved",
    );
    expect(approvals).toHaveLength(1);
    expect(approvals[0]?.details.via).toBe("whatsapp");
    const agent = await api.call<{ status: string }>("GET", `/api/agents/${hire.agent.id}`);
    expect(agent.body.status).toBe("idle");
  }, 300_000);

  it("a quoted reply sent while no bridge holds the line is applied when the next bridge takes it", async () => {
    const { api, whatsapp } = world;
    const { sid, line, companyId, phone } = await lineWithVerifiedOwner(
      world,
      "4915550009200",
      "4915550009211",
    );
    const internal = (await api.call<{ data: { id: string } }>("GET", `/api/sessions/${sid}`)).body.data.id;
    const worker = await agentWithKey(world, companyId, { name: "Builder", role: "engineer" });
    const issue = await api.call<{ id: string }>("POST", `/api/companies/${companyId}/issues`, {
      title: "Pick a bank",
      assigneeAgentId: worker.id,
    });
    const { questionId, notice } = await agentAsks(
      world,
      phone,
      worker,
      issue.body.id,
      "Which bank should we use?",
    );

    // The line goes down: its bridge is killed, and no other bridge is running.
    await holderOf(internal).kill("SIGKILL");
    await eventually(
      async () => (whatsapp.isConnected(line.jid) ? undefined : true),
      30_000,
      "the line's device offline",
    );
    await replyQuoting(phone, line, notice, "Use the Mutual, fees are lower");
    expect(whatsapp.offline.count(line.jid)).toBeGreaterThan(0);

    await startBridge("line-c");
    const answered = await answeredQuestion(world, issue.body.id, questionId, 90_000);
    expect(answered).toMatchObject({ answer: "Use the Mutual, fees are lower", answeredVia: "whatsapp" });
    await eventually(
      async () => (texts(phone).some((text) => text.startsWith("Answered")) ? true : undefined),
      30_000,
      "the confirmation on the owner's phone",
    );
  }, 300_000);
});
