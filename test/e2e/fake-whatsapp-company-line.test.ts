// Issue 28 end to end on real Baileys against the fake WhatsApp, through `npm start` (Worker, bridge,
// runner): the company's line reaches its owner's own phone. The owner links and verifies their number
// with the code the line sends; an agent's hire request arrives on that phone as a poll; the phone
// votes Approve; the hire is approved as that owner "via WhatsApp", the agent is idle, and the phone
// gets a one-line confirmation quoting its vote's poll.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import { eventually } from "../support/api.ts";
import { createCompany } from "../support/control-runs.ts";
import { type FakeWhatsAppStack, pairByQr, startFakeWhatsAppStack } from "../support/fake-whatsapp-stack.ts";

const SID = `line-${Math.random().toString(36).slice(2, 8)}`;
let world: FakeWhatsAppStack;

beforeAll(async () => {
  world = await startFakeWhatsAppStack();
}, 180_000);

afterAll(async () => {
  await world?.stop();
});

interface Approval {
  id: string;
  status: string;
  decidedByUserId: string | null;
}

describe("the company's line on the owner's phone", () => {
  it("a hire request arrives as a poll; voting Approve hires the agent, as the owner via WhatsApp", async () => {
    const { api, whatsapp } = world;
    expect((await api.call("POST", "/api/sessions", { name: SID, sessionId: SID })).status).toBe(200);
    const line = await pairByQr(api, whatsapp, SID, "4915550007000");
    const companyId = await createCompany(api);
    expect((await api.call("PUT", `/api/companies/${companyId}/line`, { sessionId: SID })).status).toBe(200);

    // The owner links their own phone and confirms the code the line sent it.
    const phone = new FakeContact(whatsapp, "4915550007111", "Olivia");
    const linked = await api.call("PUT", `/api/companies/${companyId}/line/members/me`, {
      phone: "+4915550007111",
    });
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    const codeMessage = await eventually(
      async () => phone.inbox.find((message) => /\b\d{6}\b/.test(message.text ?? "")),
      30_000,
      "the verification code on the owner's phone",
    );
    const code = (codeMessage.text ?? "").match(/\b(\d{6})\b/)?.[1];
    const verified = await api.call("POST", `/api/companies/${companyId}/line/members/me/verify`, { code });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);

    // The CEO asks to hire; the company requires the board's approval for new agents.
    const ceo = await api.call<{ id: string }>("POST", `/api/companies/${companyId}/agents`, {
      name: "Ceo",
      role: "ceo",
      adapterType: "coder_local",
    });
    expect(ceo.status, JSON.stringify(ceo.body)).toBe(201);
    const key = await api.call<{ token: string }>("POST", `/api/agents/${ceo.body.id}/keys`, {});
    const hired = await fetch(`${world.stack.baseUrl}/api/companies/${companyId}/agent-hires`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key.body.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Designer", role: "designer", adapterType: "coder_local" }),
    });
    const hire = {
      status: hired.status,
      body: (await hired.json()) as { agent: { id: string; status: string }; approval: Approval },
    };
    expect(hire.status, JSON.stringify(hire.body)).toBe(201);
    expect(hire.body.agent.status).toBe("pending_approval");

    const poll = await eventually(
      async () =>
        phone.inbox.find(
          (message) => (message.message.pollCreationMessageV3 ?? message.message.pollCreationMessage) != null,
        ),
      30_000,
      "the hire's poll on the owner's phone",
    );
    const pollCreation = poll.message.pollCreationMessageV3 ?? poll.message.pollCreationMessage;
    expect(pollCreation?.options?.map((option) => option.optionName)).toEqual([
      "Approve",
      "Reject",
      "Ask for changes",
    ]);
    expect(pollCreation?.name).toContain("Designer");

    await phone.sendPollVote(line, poll, ["Approve"]);
    const decided = await eventually(
      async () => {
        const approval = await api.call<Approval>("GET", `/api/approvals/${hire.body.approval.id}`);
        return approval.body.status === "approved" ? approval.body : undefined;
      },
      30_000,
      "the approval decided by the vote",
    );
    expect(decided.status).toBe("approved");
    const agent = await api.call<{ status: string }>("GET", `/api/agents/${hire.body.agent.id}`);
    expect(agent.body.status).toBe("idle");
    // The activity log says who decided and how: the company's owner, via WhatsApp.
    const members = await api.call<{ members: Array<{ userId: string; role: string }> }>(
      "GET",
      `/api/companies/${companyId}/members`,
    );
    const ownerId = members.body.members.find((member) => member.role === "owner")?.userId;
    expect(decided.decidedByUserId).toBe(ownerId);
    const activity = await api.call<
      Array<{ action: string; actorId: string; entityId: string; details: { via?: string } }>
    >("GET", `/api/companies/${companyId}/activity`);
    const decision = activity.body.filter(
      (entry) => entry.action === "approval.approved" && entry.entityId === hire.body.approval.id,
    );
    expect(decision).toEqual([
      expect.objectContaining({ actorId: ownerId, details: expect.objectContaining({ via: "whatsapp" }) }),
    ]);

    const confirmation = await eventually(
      async () =>
        phone.inbox.find((message) => message.id !== poll.id && /approved/i.test(message.text ?? "")),
      30_000,
      "the confirmation on the owner's phone",
    );
    expect(confirmation.text).toMatch(/Designer/);
  }, 240_000);
});
