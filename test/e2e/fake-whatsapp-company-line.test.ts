// Issue 28 end to end on real Baileys against the fake WhatsApp, through `npm start` (Worker, bridge,
// runner): the company's line reaches its owner's own phone. The owner links and verifies their number
// with the code the line sends; an agent's hire request arrives on that phone as a poll; the phone
// votes Approve; the hire is approved as that owner "via WhatsApp", the agent is idle, and the phone
// gets a one-line confirmation quoting its vote's poll. Issue 30: a member assigned an issue and
// @-mentioned in the same PATCH gets one message on their own phone naming who and which issue, and
// their reply quoting it becomes their comment on the issue.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../support/api.ts";
import {
  type Approval,
  agentAsks,
  agentWithKey as agentOf,
  answeredQuestion,
  lineWithVerifiedOwner as lineOf,
  memberWithVerifiedPhone,
  replyQuoting,
  asAgent as requestAs,
} from "../support/company-line.ts";
import { type FakeWhatsAppStack, startFakeWhatsAppStack } from "../support/fake-whatsapp-stack.ts";

let world: FakeWhatsAppStack;

beforeAll(async () => {
  world = await startFakeWhatsAppStack();
}, 180_000);

afterAll(async () => {
  await world?.stop();
});

const lineWithVerifiedOwner = (lineNumber: string, ownerNumber: string) =>
  lineOf(world, lineNumber, ownerNumber);
const agentWithKey = (companyId: string, body: Record<string, unknown>) => agentOf(world, companyId, body);
const asAgent = (headers: Record<string, string>, method: string, path: string, body: unknown) =>
  requestAs(world, headers, method, path, body);

describe("the company's line on the owner's phone", () => {
  it("a hire request arrives as a poll; voting Approve hires the agent, as the owner via WhatsApp", async () => {
    const { api } = world;
    const { line, companyId, phone } = await lineWithVerifiedOwner("4915550007000", "4915550007111");

    // The CEO asks to hire; the company requires the board's approval for new agents.
    const ceo = await agentWithKey(companyId, { name: "Ceo", role: "ceo" });
    const hired = await asAgent(ceo.headers, "POST", `/api/companies/${companyId}/agent-hires`, {
      name: "Designer",
      role: "designer",
      adapterType: "coder_local",
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

  it("a question is answered by a quoted reply (the agent wakes), and a 👎 reaction rejects an approval", async () => {
    const { api } = world;
    const { line, companyId, phone } = await lineWithVerifiedOwner("4915550008000", "4915550008111");
    const worker = await agentWithKey(companyId, { name: "Builder", role: "engineer" });
    const issue = await api.call<{ id: string }>("POST", `/api/companies/${companyId}/issues`, {
      title: "Pick a vendor",
      assigneeAgentId: worker.id,
    });
    expect(issue.status, JSON.stringify(issue.body)).toBe(201);

    // The agent asks; the issue's creator (the owner) gets it as text and answers by quoting it.
    const { questionId, notice } = await agentAsks(
      world,
      phone,
      worker,
      issue.body.id,
      "Which vendor should I use?",
    );
    await replyQuoting(phone, line, notice, "Use Acme, they are cheaper");
    const answered = await answeredQuestion(world, issue.body.id, questionId);
    expect(answered.answer).toBe("Use Acme, they are cheaper");
    const woken = await eventually(
      async () => {
        const runs = await api.call<Array<{ agentId: string; wakeReason: string }>>(
          "GET",
          `/api/companies/${companyId}/heartbeat-runs`,
        );
        return runs.body.find(
          (run) => run.agentId === worker.id && run.wakeReason === "issue_question_answered",
        );
      },
      30_000,
      "the asking agent woken by the answer",
    );
    expect(woken).toBeDefined();

    // A board approval the agent asks for; 👎 on its poll rejects it.
    const requested = await asAgent(worker.headers, "POST", `/api/companies/${companyId}/approvals`, {
      type: "request_board_approval",
      payload: { title: "Buy a second server" },
    });
    expect(requested.status).toBe(201);
    const approval = (await requested.json()) as Approval;
    const poll = await eventually(
      async () =>
        phone.inbox.find((message) =>
          (message.message.pollCreationMessageV3?.name ?? "").includes("Buy a second server"),
        ),
      30_000,
      "the approval's poll on the owner's phone",
    );
    await phone.send(line, {
      reactionMessage: {
        key: { remoteJid: line.jid, fromMe: false, id: poll.id },
        text: "👎",
        senderTimestampMs: Date.now(),
      },
    });
    const rejected = await eventually(
      async () => {
        const current = await api.call<Approval>("GET", `/api/approvals/${approval.id}`);
        return current.body.status === "rejected" ? current.body : undefined;
      },
      30_000,
      "the approval rejected by the reaction",
    );
    expect(rejected.status).toBe("rejected");
  }, 240_000);

  it("a member assigned and @-mentioned gets one notice on their phone; their quoted reply is their comment", async () => {
    const { api } = world;
    const {
      line,
      companyId,
      phone: ownerPhone,
    } = await lineWithVerifiedOwner("4915550009000", "4915550009111");
    const bea = await memberWithVerifiedPhone(world, companyId, "beatrix", "4915550009222");
    const owner = await api.call<{ name: string }>("GET", `/api/companies/${companyId}/members/me`);
    const issue = await api.call<{ id: string; identifier: string }>(
      "POST",
      `/api/companies/${companyId}/issues`,
      {
        title: "Renew the TLS certificate",
      },
    );
    expect(issue.status, JSON.stringify(issue.body)).toBe(201);
    const ownerInboxBefore = ownerPhone.inbox.length;

    const patched = await api.call("PATCH", `/api/issues/${issue.body.id}`, {
      assigneeUserId: bea.userId,
      comment: "@beatrix can you take this before Friday?",
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    const notice = await eventually(
      async () => bea.phone.inbox.find((message) => (message.text ?? "").includes(issue.body.identifier)),
      30_000,
      "the mention notice on the member's phone",
    );
    expect(notice.text).toContain(
      `${owner.body.name} assigned you ${issue.body.identifier} (Renew the TLS certificate) and mentioned you`,
    );
    expect(notice.text).toContain("can you take this before Friday?");
    expect(notice.text).toContain(`/issues/${issue.body.identifier}`);

    await replyQuoting(bea.phone, line, notice, "Yes, on it today");
    const commented = await eventually(
      async () => {
        const comments = await api.call<Array<{ body: string; authorUserId: string | null }>>(
          "GET",
          `/api/issues/${issue.body.id}/comments`,
        );
        return comments.body.find((comment) => comment.body === "Yes, on it today");
      },
      30_000,
      "the reply posted as the member's comment",
    );
    expect(commented.authorUserId).toBe(bea.userId);
    const confirmation = await eventually(
      async () => bea.phone.inbox.find((message) => (message.text ?? "").startsWith("Commented on")),
      30_000,
      "the confirmation on the member's phone",
    );
    expect(confirmation.text).toBe(`Commented on ${issue.body.identifier} — recorded for beatrix.`);
    // One notice for the assignment and the mention together; the owner, who wrote them, got none.
    expect(bea.phone.inbox.filter((message) => (message.text ?? "").includes("assigned you"))).toHaveLength(
      1,
    );
    expect(
      ownerPhone.inbox.slice(ownerInboxBefore).filter((m) => (m.text ?? "").includes("mentioned")),
    ).toEqual([]);
  }, 240_000);
});
