import { and, eq } from "drizzle-orm";
import type { LineInboundHandler } from "../../../../durable-objects/messaging/line/relay";
import type { Env } from "../../../core/env";
import { type Db, database } from "../../../db/client";
import { companies, companyLines, type LineNoticeRow, lineAnswers, lineNotices } from "../../../db/schema";
import { memberByPhone } from "../directory";
import { sendOnLine } from "../send";
import { answerApproval } from "./approval";
import {
  type AnswerContext,
  type AnswerResult,
  type AppFetch,
  callAs,
  LINE_ORIGIN,
  memberPrincipal,
  runInProcess,
} from "./context";
import { type Inbound, inboundOf } from "./inbound";
import { answerMention } from "./mention";
import { answerQuestion } from "./question";

/**
 * What comes back on the company's line (issue 28): each inbound message of a line session that
 * answers one of its notices, applied once, as the member whose verified number sent it, through the
 * dashboard's own routes; the line then answers with one line quoting it. docs/company-line.md.
 */

/** The outcome a claimed answer has until it is applied: one found in it again is applied again. */
const RECEIVED = "received";

/**
 * Records the answer before anything else. True when it is this call's to apply: new, or received
 * but never finished (a crash in between); false when a replay finds it already done.
 */
async function claim(db: Db, companyId: string, inbound: Inbound, notice: LineNoticeRow): Promise<boolean> {
  await db
    .insert(lineAnswers)
    .values({
      companyId,
      waMessageId: inbound.id,
      noticeId: notice.id,
      phone: inbound.phone ?? "",
      outcome: RECEIVED,
      detail: inbound.kind,
      createdAt: Date.now(),
    })
    .onConflictDoNothing();
  const row = await db
    .select({ outcome: lineAnswers.outcome })
    .from(lineAnswers)
    .where(and(eq(lineAnswers.companyId, companyId), eq(lineAnswers.waMessageId, inbound.id)))
    .get();
  return row?.outcome === RECEIVED;
}

const finish = (db: Db, companyId: string, id: string, result: AnswerResult) =>
  db
    .update(lineAnswers)
    .set({ outcome: result.outcome, detail: result.detail })
    .where(and(eq(lineAnswers.companyId, companyId), eq(lineAnswers.waMessageId, id)));

/** The answer of a number that is not the notice's member now: access ended, or nobody we know. */
async function notTheMember(db: Db, companyId: string, inbound: Inbound, notice: LineNoticeRow) {
  if (inbound.phone === null || inbound.phone !== notice.phone)
    return { outcome: "ignored", detail: "not the notice's member", reply: null } satisfies AnswerResult;
  const company = await db
    .select({ name: companies.name })
    .from(companies)
    .where(eq(companies.id, companyId))
    .get();
  return {
    outcome: "refused",
    detail: "access ended",
    reply: `Your access to ${company?.name ?? "this company"} has ended, so nothing was changed.`,
  } satisfies AnswerResult;
}

/** A text reply quotes the member's own message; a vote or a reaction quotes the notice it answered. */
const quotedFor = (inbound: Inbound, notice: LineNoticeRow) =>
  inbound.kind === "reply" ? inbound.id : (notice.waMessageId ?? undefined);

async function sendReply(
  env: Env,
  appFetch: AppFetch,
  companyId: string,
  inbound: Inbound,
  notice: LineNoticeRow,
  text: string,
) {
  const fetch = (request: Request) => runInProcess(appFetch, env, request);
  const quotedMessageId = quotedFor(inbound, notice);
  const sent = await sendOnLine(env, fetch, LINE_ORIGIN, companyId, notice.phone, {
    type: "text",
    text,
    ...(quotedMessageId ? { quotedMessageId } : {}),
  });
  // The decision stands either way; a confirmation the line could not send is not sent again.
  if (!sent.ok)
    console.error(
      JSON.stringify({ msg: "line reply not sent", companyId, status: sent.status, error: sent.error }),
    );
}

async function decide(ctx: AnswerContext): Promise<AnswerResult> {
  switch (ctx.notice.subjectType) {
    case "approval":
      return answerApproval(ctx);
    case "question":
      return answerQuestion(ctx);
    case "notification":
      return answerMention(ctx);
    default:
      return {
        outcome: "ignored",
        detail: `a ${ctx.notice.subjectType} notice takes no answer`,
        reply: null,
      };
  }
}

async function answerInCompany(env: Env, appFetch: AppFetch, companyId: string, inbound: Inbound) {
  const db = database(env.DB);
  const notice = await db
    .select()
    .from(lineNotices)
    .where(and(eq(lineNotices.companyId, companyId), eq(lineNotices.waMessageId, inbound.answers)))
    .get();
  if (!notice || !(await claim(db, companyId, inbound, notice))) return;
  const member = inbound.phone === null ? null : await memberByPhone(db, companyId, inbound.phone);
  const principal =
    member?.userId === notice.userId ? await memberPrincipal(db, companyId, member.userId) : null;
  const result =
    member && principal && member.userId === notice.userId
      ? await decide({
          env,
          db,
          companyId,
          notice,
          member,
          inbound,
          asMember: (method, path, body) => callAs(appFetch, env, principal, method, path, body),
        })
      : await notTheMember(db, companyId, inbound, notice);
  await finish(db, companyId, inbound.id, result);
  if (result.reply !== null) await sendReply(env, appFetch, companyId, inbound, notice, result.reply);
}

/** The SessionDO's relay hands every inbound event here (app.ts registers it); other sessions' pass. */
export function lineAnswersHandler(appFetch: AppFetch): LineInboundHandler {
  return async (env, sessionId, entry) => {
    const inbound = inboundOf(entry);
    if (inbound === null) return;
    const lines = await database(env.DB)
      .select({ companyId: companyLines.companyId })
      .from(companyLines)
      .where(eq(companyLines.sessionId, sessionId))
      .all();
    for (const { companyId } of lines) await answerInCompany(env, appFetch, companyId, inbound);
  };
}
