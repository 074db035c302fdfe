// The company's line on real Baileys against the fake WhatsApp (issue 28), as the e2e suites set it
// up through the API: a paired session linked as a company's line, the owner's phone verified with
// the code the line sends, agents with keys, and what the owner's phone received.
import { expect } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import { type ApiClient, eventually, ownerClient } from "./api.ts";
import { createCompany } from "./control-runs.ts";
import { type FakeWhatsAppStack, pairByQr } from "./fake-whatsapp-stack.ts";

export interface Approval {
  id: string;
  status: string;
  decidedByUserId: string | null;
}

/** A company whose line is a paired session and whose owner verified their own phone on it. */
export async function lineWithVerifiedOwner(
  world: FakeWhatsAppStack,
  lineNumber: string,
  ownerNumber: string,
) {
  const { api, whatsapp } = world;
  const sid = `line-${Math.random().toString(36).slice(2, 8)}`;
  expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
  const line = await pairByQr(api, whatsapp, sid, lineNumber);
  const companyId = await createCompany(api);
  expect((await api.call("PUT", `/api/companies/${companyId}/line`, { sessionId: sid })).status).toBe(200);

  // The owner links their own phone and confirms the code the line sent it.
  const phone = new FakeContact(whatsapp, ownerNumber, "Olivia");
  const linked = await api.call("PUT", `/api/companies/${companyId}/line/members/me`, {
    phone: `+${ownerNumber}`,
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
  return { sid, line, companyId, phone };
}

/**
 * `client` links `number` on the company's line and confirms the code the line sent to that phone
 * (a FakeContact); answers the phone.
 */
async function verifyPhone(world: FakeWhatsAppStack, client: ApiClient, companyId: string, number: string) {
  const phone = new FakeContact(world.whatsapp, number, "Member");
  const linked = await client.call("PUT", `/api/companies/${companyId}/line/members/me`, {
    phone: `+${number}`,
  });
  expect(linked.status, JSON.stringify(linked.body)).toBe(200);
  const codeMessage = await eventually(
    async () => phone.inbox.find((message) => /\b\d{6}\b/.test(message.text ?? "")),
    30_000,
    "the verification code on the member's phone",
  );
  const code = (codeMessage.text ?? "").match(/\b(\d{6})\b/)?.[1];
  const verified = await client.call("POST", `/api/companies/${companyId}/line/members/me/verify`, { code });
  expect(verified.status, JSON.stringify(verified.body)).toBe(200);
  return phone;
}

/**
 * A new person (display name `name`) who joins the company by an invite as a member and verifies
 * their own phone `number` on its line: their client, user id and phone.
 */
export async function memberWithVerifiedPhone(
  world: FakeWhatsAppStack,
  companyId: string,
  name: string,
  number: string,
) {
  const client = await ownerClient(world.stack.baseUrl, world.api, name);
  const invite = await world.api.call<{ token: string }>(
    "POST",
    `/api/companies/${companyId}/member-invites`,
    {
      role: "member",
    },
  );
  expect(invite.status, JSON.stringify(invite.body)).toBe(201);
  const joined = await client.call("POST", `/api/member-invites/${invite.body.token}/accept`);
  expect(joined.status, JSON.stringify(joined.body)).toBe(200);
  const me = await client.call<{ userId: string }>("GET", `/api/companies/${companyId}/members/me`);
  expect(me.status, JSON.stringify(me.body)).toBe(200);
  const phone = await verifyPhone(world, client, companyId, number);
  return { client, userId: me.body.userId, phone };
}

/** An agent of the company and its key's Authorization header. */
export async function agentWithKey(
  world: FakeWhatsAppStack,
  companyId: string,
  body: Record<string, unknown>,
) {
  const agent = await world.api.call<{ id: string }>("POST", `/api/companies/${companyId}/agents`, {
    adapterType: "coder_local",
    ...body,
  });
  expect(agent.status, JSON.stringify(agent.body)).toBe(201);
  const key = await world.api.call<{ token: string }>("POST", `/api/agents/${agent.body.id}/keys`, {});
  return {
    id: agent.body.id,
    headers: { Authorization: `Bearer ${key.body.token}`, "Content-Type": "application/json" },
  };
}

/** A JSON request with an agent's headers. */
export const asAgent = (
  world: FakeWhatsAppStack,
  headers: Record<string, string>,
  method: string,
  path: string,
  body: unknown,
) => fetch(`${world.stack.baseUrl}${path}`, { method, headers, body: JSON.stringify(body) });

/** The first poll on `phone` whose question contains `part`. */
export function pollOn(phone: FakeContact, part: string) {
  return eventually(
    async () =>
      phone.inbox.find((message) => {
        const poll = message.message.pollCreationMessageV3 ?? message.message.pollCreationMessage;
        return poll != null && (poll.name ?? "").includes(part);
      }),
    30_000,
    `a poll about "${part}" on the owner's phone`,
  );
}

type Phone = FakeContact;
type Companion = Parameters<FakeContact["send"]>[0];
type Received = FakeContact["inbox"][number];

/** The agent asks on the issue; answers the question's id and its notice as it reached `phone`. */
export async function agentAsks(
  world: FakeWhatsAppStack,
  phone: Phone,
  agent: { headers: Record<string, string> },
  issueId: string,
  body: string,
): Promise<{ questionId: string; notice: Received }> {
  const asked = await asAgent(world, agent.headers, "POST", `/api/issues/${issueId}/questions`, { body });
  expect(asked.status).toBe(201);
  const { id } = (await asked.json()) as { id: string };
  const notice = await eventually(
    async () =>
      phone.inbox.find((message) => {
        const text = message.text ?? "";
        // After 09:00 the owner's daily digest may list the question too; the notice is what is quoted.
        return text.includes(body) && !text.includes("daily digest");
      }),
    30_000,
    "the question on the owner's phone",
  );
  return { questionId: id, notice };
}

/** `phone` replies to `line` quoting `quoted`, as WhatsApp's "Reply" does. */
export function replyQuoting(phone: Phone, line: Companion, quoted: Received, text: string) {
  return phone.send(line, {
    extendedTextMessage: {
      text,
      contextInfo: { stanzaId: quoted.id, participant: line.jid, quotedMessage: quoted.message },
    },
  });
}

export interface QuestionView {
  id: string;
  answer: string | null;
  answeredVia: string | null;
}

/** Waits until the question has an answer (through the API); answers the question. */
export function answeredQuestion(
  world: FakeWhatsAppStack,
  issueId: string,
  questionId: string,
  timeoutMs = 30_000,
) {
  return eventually(
    async () => {
      const list = await world.api.call<QuestionView[]>("GET", `/api/issues/${issueId}/questions`);
      const found = list.body.find((item) => item.id === questionId);
      return found?.answer ? found : undefined;
    },
    timeoutMs,
    "the question answered from the phone",
  );
}
