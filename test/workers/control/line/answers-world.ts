// A company line with verified members, notices sent on it (a poll for an approval, a text for a
// question), and what a member's phone does: vote, reply quoting, react. Replies and reactions enter
// the real SessionDO from its fake bridge, as the bridge reports them, votes too (decrypted, as the
// bridge reports a `poll.vote`).
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { lineInboundHandler } from "../../../../durable-objects/messaging/line/relay";
import { call } from "../../helpers";
import { type Line, linkedLine, personJid } from "../../mcp/whatsapp-line";
import { eventually } from "../../patience";
import { addMembership, type BoardUser, boardUser, seedIssue } from "../helpers";

export const OPTIONS = ["Approve", "Reject", "Ask for changes"];

export interface Member {
  user: BoardUser;
  name: string;
  jid: string;
  phone: string;
}

export const digits = (jid: string) => jid.split("@")[0] ?? "";

/** A user with `role` in the line's company (the owner when `user` is the line's owner), with a number. */
export async function member(
  line: Line,
  name: string,
  options: { role?: "owner" | "member" | "viewer"; user?: BoardUser; verified?: boolean } = {},
): Promise<Member> {
  const user = options.user ?? (await boardUser());
  const now = Date.now();
  await env.DB.prepare("UPDATE users SET name = ? WHERE id = ?").bind(name, user.userId).run();
  if (!options.user) await addMembership(line.company.id, user.userId, options.role ?? "member");
  const jid = personJid();
  await env.DB.prepare(
    `INSERT INTO line_members (company_id, user_id, phone, verified_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
  )
    .bind(line.company.id, user.userId, digits(jid), options.verified === false ? null : now, now, now)
    .run();
  return { user, name, jid, phone: digits(jid) };
}

/**
 * `to`'s notice about `subject`: the one the line's own notices sent (a member whose number was
 * verified when the approval or question was made gets one, docs/company-line.md "What goes out"), or
 * else one sent here and recorded as that notice. Its WhatsApp id.
 */
export async function notice(
  line: Line,
  to: Member,
  subject: { type: "approval" | "question"; id: string },
): Promise<string> {
  const queued = await env.DB.prepare(
    "SELECT id FROM line_notices WHERE user_id = ? AND subject_type = ? AND subject_id = ?",
  )
    .bind(to.user.userId, subject.type, subject.id)
    .first<{ id: string }>();
  if (queued) return sentNotice(queued.id);
  const chat = `/api/messages/${line.session.slug}/${encodeURIComponent(to.jid)}`;
  const sent =
    subject.type === "approval"
      ? await call<{ data: { id: string } }>("POST", `${chat}/poll`, {
          headers: line.owner.headers,
          body: { question: "Approve the budget request?", options: OPTIONS, selectableCount: 1 },
        })
      : await call<{ data: { id: string } }>("POST", `${chat}/send`, {
          headers: line.owner.headers,
          body: { message: { text: "Agent asks: which vendor?" } },
        });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  const now = Date.now();
  await env.DB.prepare(
    `INSERT INTO line_notices (id, company_id, user_id, kind, subject_type, subject_id, phone, text,
       poll_options, status, not_before, wa_message_id, created_at, sent_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'sent', ?, ?, ?, ?)`,
  )
    .bind(
      crypto.randomUUID(),
      line.company.id,
      to.user.userId,
      subject.type === "approval" ? "approvals" : "questions",
      subject.type,
      subject.id,
      to.phone,
      "notice",
      subject.type === "approval" ? JSON.stringify(OPTIONS) : null,
      now,
      sent.body.data.id,
      now,
      now,
    )
    .run();
  return sent.body.data.id;
}

/** A pending board approval the line's agent requested. */
export async function pendingApproval(line: Line): Promise<string> {
  const res = await call<{ id: string }>("POST", `/api/companies/${line.company.id}/approvals`, {
    headers: line.agent.headers,
    body: { type: "request_board_approval", payload: { title: "budget raise to $500" } },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

/** A question the line's agent asks on an issue. */
export async function pendingQuestion(line: Line): Promise<{ issueId: string; questionId: string }> {
  const issue = await seedIssue(line.company, { assigneeAgentId: line.agent.id });
  const res = await call<{ id: string }>("POST", `/api/issues/${issue.id}/questions`, {
    headers: line.agent.headers,
    body: { body: "Which vendor should I use?" },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { issueId: issue.id, questionId: res.body.id };
}

/**
 * The member votes in the poll `pollId`: the fake bridge reports the decrypted vote to the real
 * SessionDO, whose relay hands it to the line. Resolves once the line has recorded how it ended.
 */
export async function vote(line: Line, voter: Member, pollId: string, options: string[], keyId?: string) {
  const id = await line.voteFrom(voter.jid, pollId, options, keyId);
  await eventually(async () => {
    const row = await answerRow(line.company.id, id);
    return row !== null && row.outcome !== "received";
  });
  return id;
}

/**
 * The relay hands the same vote over again, as it does when the SessionDO stopped after the line
 * applied it but before its cursor moved (messaging/line/relay.ts): straight into the registered handler.
 */
export async function replayVote(
  line: Line,
  voter: Member,
  pollId: string,
  options: string[],
  keyId: string,
) {
  const handler = lineInboundHandler();
  if (!handler) throw new Error("no line inbound handler registered");
  await handler(env, line.session.id, {
    seq: 0,
    event: "poll.vote",
    data: {
      keyId,
      pollId,
      remoteJid: voter.jid,
      voter: voter.jid,
      voterPhone: voter.phone,
      selectedOptions: options,
      timestamp: Date.now(),
    },
  });
}

export const reply = (line: Line, from: Member | string, quoted: string, text: string, id?: string) =>
  line.receiveFrom(typeof from === "string" ? from : from.jid, text, {
    quotedId: quoted,
    ...(id ? { id } : {}),
  });

export const react = (line: Line, from: Member, target: string, emoji: string) =>
  line.receiveFrom(from.jid, "", { content: { type: "reaction", emoji, targetId: target } });

type SentArgs = { to: string; content: { type: string; text?: string }; quoted?: { id: string } };

/** Texts the line sent `to`, with the id each quoted. */
export const textsTo = (line: Line, to: Member) =>
  (line.sent(to.jid) as unknown as SentArgs[])
    .filter((args) => args.content.type === "text")
    .map((args) => ({ text: args.content.text ?? "", quoted: args.quoted?.id ?? null }));

/** Waits for a text to `to` containing `part`; answers it. */
export async function replyTo(line: Line, to: Member, part: string) {
  await eventually(async () => textsTo(line, to).some((t) => t.text.includes(part)));
  const found = textsTo(line, to).find((t) => t.text.includes(part));
  if (!found) throw new Error("unreachable");
  return found;
}

export const approvalRow = (id: string) =>
  env.DB.prepare("SELECT status, decision_note, decided_by_user_id FROM approvals WHERE id = ?")
    .bind(id)
    .first<{ status: string; decision_note: string | null; decided_by_user_id: string | null }>();

export const decisionsOf = (approvalId: string) =>
  env.DB.prepare(
    `SELECT action, actor_type, actor_id, details FROM activity_log
     WHERE entity_id = ? AND action != 'approval.created' ORDER BY created_at, rowid`,
  )
    .bind(approvalId)
    .all<{ action: string; actor_type: string; actor_id: string; details: string }>()
    .then((r) =>
      r.results.map((row) => ({ ...row, details: JSON.parse(row.details) as Record<string, unknown> })),
    );

/** How the line recorded the inbound message `id`. */
export const answerRow = (companyId: string, id: string) =>
  env.DB.prepare("SELECT outcome, detail, phone FROM line_answers WHERE company_id = ? AND wa_message_id = ?")
    .bind(companyId, id)
    .first<{ outcome: string; detail: string | null; phone: string }>();

export async function lineWithOwner(ownerName = "Olivia") {
  const line = await linkedLine();
  const owner = await member(line, ownerName, { user: line.owner });
  return { line, owner };
}

/** The WhatsApp id of a notice the line's sender sends (after the request, in its waitUntil). */
async function sentNotice(noticeId: string): Promise<string> {
  let waMessageId: string | null = null;
  await eventually(async () => {
    const row = await env.DB.prepare("SELECT status, wa_message_id FROM line_notices WHERE id = ?")
      .bind(noticeId)
      .first<{ status: string; wa_message_id: string | null }>();
    waMessageId = row?.status === "sent" ? row.wa_message_id : null;
    return waMessageId !== null;
  });
  return waMessageId ?? "";
}
