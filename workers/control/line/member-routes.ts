import { createRoute, z } from "@hono/zod-openapi";
import { and, asc, eq } from "drizzle-orm";
import type { Context } from "hono";
import type { AppEnv } from "../../core/env";
import type { Db } from "../../db/client";
import { companyMemberships, type LineMemberRow, lineMembers, users } from "../../db/schema";
import { registeredAppFetch } from "../../http/app-fetch";
import { ApiError, conflict, conflictOnDuplicate, titleOf, unprocessable } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { companyForActor, controlContext, requireBoard, requireOwner } from "../shared";
import {
  CompanyParamSchema,
  LineMemberSchema,
  lineMemberResource,
  MyLineNumberSchema,
  myNumberResource,
  PreferencesBodySchema,
  PutNumberBodySchema,
  VerifyBodySchema,
} from "./member-schemas";
import {
  codeHashOf,
  codeMatches,
  countWrongTry,
  findLineMember,
  isTimeZone,
  markVerified,
  newCode,
  RESEND_INTERVAL_MS,
  releaseCodeSlot,
  savePreferences,
  storeSentCode,
  takeCodeSlot,
  unlinkNumber,
  verifiedByAnother,
  voidCode,
} from "./member-store";
import { rememberOrigin } from "./notices";
import { sendOnLine } from "./send";

/**
 * Each member's own number on the company's line (issue 28): linked with a 6-digit code the line
 * sends, and what the member wants to hear about. Any member, viewers included, manages their own;
 * owners see everyone's (masked). docs/company-line.md "Your number".
 */
export const memberLineRoutes = createRouter();
const tags = ["Companies"];
const ME = "/companies/{companyId}/line/members/me";

type Ctx = Context<AppEnv>;

/** The board user and the company they are a member of (agents: 403; other companies: 404). */
async function me(c: Ctx, what: string) {
  const { actor, db } = controlContext(c);
  const company = await companyForActor(db, actor, c.req.param("companyId") ?? "");
  requireBoard(actor, what);
  return { db, actor, company, userId: actor.userId };
}

const SAME_NUMBER_ELSEWHERE = "This number is already verified by another member of this company";

memberLineRoutes.openapi(
  createRoute({
    method: "get",
    path: ME,
    tags,
    summary: "Your number on the company's line, verified or not, and your preferences",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(MyLineNumberSchema, "Your number (phone null when none)"), ...controlErrors },
  }),
  async (c) => {
    const { db, company, userId } = await me(c, "link a number");
    return c.json(
      myNumberResource(company.id, await findLineMember(db, company.id, userId), Date.now()),
      200,
    );
  },
);

memberLineRoutes.openapi(
  createRoute({
    method: "put",
    path: ME,
    tags,
    summary: "Link your number: the company's line sends it a 6-digit code to confirm",
    description:
      "E.164 with or without `+`; stored as digits. The code is valid 10 minutes; confirm it with " +
      "`POST …/me/verify`. A new number is unverified until then (nothing is sent to it); the same " +
      "number stays verified. At most one code a minute (429 with Retry-After). 409 when the company " +
      "has no line, the line cannot send (disconnected), or another member verified this number.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(PutNumberBodySchema) },
    responses: {
      200: json(MyLineNumberSchema, "The code was sent"),
      ...controlErrors,
      409: controlError("No line, the line could not send, or the number is another member's"),
      429: controlError("A code was sent less than a minute ago; see Retry-After"),
    },
  }),
  async (c) => {
    const { db, company, userId } = await me(c, "link a number");
    const phone = c.req.valid("json").phone.replace(/^\+/, "");
    const now = Date.now();
    const member = { companyId: company.id, userId };
    const before = await findLineMember(db, company.id, userId);
    const lastSent = before?.codeSentAt ?? null;
    if (lastSent !== null && now - lastSent < RESEND_INTERVAL_MS)
      throw tooSoon(lastSent + RESEND_INTERVAL_MS, now);
    if (await verifiedByAnother(db, company.id, userId, phone)) throw conflict(SAME_NUMBER_ELSEWHERE);
    const slot = await takeCodeSlot(db, member, phone, now);
    if (!slot.taken) throw tooSoon(slot.opensAt, now);
    const code = newCode();
    const sent = await sendOnLine(c.env, appFetchOf(c), new URL(c.req.url).origin, company.id, phone, {
      type: "text",
      text: `Your Switchboard code for ${company.name}: ${code} (valid 10 minutes)`,
    });
    if (!sent.ok) {
      await releaseCodeSlot(db, member, before, now);
      throw conflict(`The company's line could not send the code: ${sent.error}`);
    }
    await storeSentCode(
      db,
      { companyId: company.id, userId },
      phone,
      await codeHashOf(company.id, userId, code),
      now,
    );
    return c.json(myNumberResource(company.id, await findLineMember(db, company.id, userId), now), 200);
  },
);

memberLineRoutes.openapi(
  createRoute({
    method: "post",
    path: `${ME}/verify`,
    tags,
    summary: "Confirm your number with the code the line sent",
    description:
      "422 for a wrong or expired code, or none pending; after 5 wrong codes the code is void and a new " +
      "one must be requested. 409 when another member verified the same number meanwhile.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(VerifyBodySchema) },
    responses: {
      200: json(MyLineNumberSchema, "Verified"),
      ...controlErrors,
      409: controlError("Another member of this company verified this number"),
      422: controlError("Wrong, expired or void code, or none pending"),
    },
  }),
  async (c) => {
    const { db, company, userId } = await me(c, "verify a number");
    const row = await findLineMember(db, company.id, userId);
    const now = Date.now();
    await checkCode(db, row, c.req.valid("json").code, now);
    if (row && (await verifiedByAnother(db, company.id, userId, row.phone)))
      throw conflict(SAME_NUMBER_ELSEWHERE);
    if (row) await conflictOnDuplicate(markVerified(db, row, now), SAME_NUMBER_ELSEWHERE);
    // From here the line may message this member, also from the cron: its links need the address.
    await rememberOrigin(db, company.id, new URL(c.req.url).origin, now);
    return c.json(myNumberResource(company.id, await findLineMember(db, company.id, userId), now), 200);
  },
);

memberLineRoutes.openapi(
  createRoute({
    method: "patch",
    path: ME,
    tags,
    summary: "Choose what reaches you, your quiet hours and your time zone",
    description:
      "Only the fields sent change. `quietHours: null` removes them. 422 for a time zone Intl does not " +
      "know, equal start and end, or no number linked yet.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(PreferencesBodySchema) },
    responses: {
      200: json(MyLineNumberSchema, "Your preferences"),
      ...controlErrors,
      422: controlError("Unknown time zone, empty quiet hours, or no number linked"),
    },
  }),
  async (c) => {
    const { db, company, userId } = await me(c, "change line preferences");
    const change = c.req.valid("json");
    if (change.timeZone !== undefined && !isTimeZone(change.timeZone))
      throw unprocessable(`timeZone: "${change.timeZone}" is not an IANA time zone (e.g. Europe/Berlin)`);
    if (change.quietHours && change.quietHours.start === change.quietHours.end)
      throw unprocessable("quietHours: start and end must differ (send null for none)");
    const row = await findLineMember(db, company.id, userId);
    if (!row) throw unprocessable("Link your number first (PUT …/line/members/me)");
    const now = Date.now();
    await savePreferences(db, row, change, now);
    return c.json(myNumberResource(company.id, await findLineMember(db, company.id, userId), now), 200);
  },
);

memberLineRoutes.openapi(
  createRoute({
    method: "delete",
    path: ME,
    tags,
    summary: "Unlink your number: the line sends you nothing more and ignores your answers",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 204: { description: "Unlinked (also when none was linked)" }, ...controlErrors },
  }),
  async (c) => {
    const { db, company, userId } = await me(c, "unlink a number");
    await unlinkNumber(db, company.id, userId);
    return c.body(null, 204);
  },
);

memberLineRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/line/members",
    tags,
    summary: "Every member's number on the line, masked, and their preferences (owners only)",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(z.array(LineMemberSchema), "Every member, linked or not"), ...controlErrors },
  }),
  async (c) => {
    const { db, actor, company } = await me(c, "see members' numbers");
    await requireOwner(db, actor, company.id, "see members' numbers");
    return c.json(await membersOnLine(db, company.id), 200);
  },
);

async function membersOnLine(db: Db, companyId: string) {
  const rows = await db
    .select({
      userId: companyMemberships.userId,
      name: users.name,
      role: companyMemberships.role,
      line: lineMembers,
    })
    .from(companyMemberships)
    .innerJoin(users, eq(users.id, companyMemberships.userId))
    .leftJoin(
      lineMembers,
      and(eq(lineMembers.companyId, companyMemberships.companyId), eq(lineMembers.userId, users.id)),
    )
    .where(eq(companyMemberships.companyId, companyId))
    .orderBy(asc(companyMemberships.createdAt), asc(users.name))
    .all();
  return rows.map(({ line, ...member }) => lineMemberResource(member, line));
}

/** The 429 of a code asked for before the last one is a minute old (`opensAt`). */
function tooSoon(opensAt: number, now: number): ApiError {
  const seconds = Math.max(1, Math.ceil((opensAt - now) / 1000));
  return new ApiError(
    429,
    titleOf(429),
    `A code was sent less than a minute ago; try again in ${seconds} s`,
    undefined,
    {
      "Retry-After": String(seconds),
    },
  );
}

/** Throws the 422 a wrong, expired, void or missing code gets; counts a wrong try. */
async function checkCode(db: Db, row: LineMemberRow | undefined, code: string, now: number): Promise<void> {
  if (!row || row.codeHash === null)
    throw unprocessable("No code is pending: request a new one (PUT …/line/members/me with your number)");
  if ((row.codeExpiresAt ?? 0) <= now) {
    await voidCode(db, row, now);
    throw unprocessable("The code expired (codes are valid 10 minutes): request a new one");
  }
  if (await codeMatches(row, code)) return;
  const left = await countWrongTry(db, row, now);
  throw unprocessable(
    left === 0
      ? "Wrong code, and that was the 5th: the code is void; request a new one"
      : `Wrong code; ${left} ${left === 1 ? "try" : "tries"} left`,
  );
}

/** The app's own fetch bound to this request (sendOnLine goes through the gateway's REST route). */
function appFetchOf(c: Ctx) {
  const appFetch = registeredAppFetch();
  return (request: Request) => appFetch(request, c.env, c.executionCtx);
}
