// The daily digest on the company's line (issue 28, docs/company-line.md "What goes out"): once per
// member per company per local day, at 09:00 in the member's time zone (or when their quiet hours end),
// only to a verified member who chose it and has something to report, scoped to their role and company.
// Time is driven by the cron's scheduled time; asserted on line_notices and on what the fake bridge sent.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { queueDueDigests } from "../../../../workers/control/line";
import { database } from "../../../../workers/db/client";
import { call, scheduledTick } from "../../helpers";
import { type Line, linkedLine } from "../../mcp/whatsapp-line";
import { type BoardUser, seedIssue } from "../helpers";
import {
  jid,
  lineComesBack,
  lineGoesDown,
  linkNumber as linkAnyNumber,
  member,
  noticesOf,
  requestApproval,
} from "./notices-world";

/** A number whose member receives every kind, the digest included (as the line's default is). */
const linkNumber = (...[companyId, user, options]: Parameters<typeof linkAnyNumber>) =>
  linkAnyNumber(companyId, user, {
    notify: ["approvals", "questions", "budget", "failed_runs", "digest"],
    ...options,
  });

const MINUTE = 60_000;
const DAY = 86_400_000;
const KOLKATA = "Asia/Kolkata"; // UTC+05:30 all year: 09:00 there is 03:30 UTC.

/** The first instant after now (and after `after`) that is hh:mm local in a zone `offset` minutes ahead of UTC. */
function nextLocal(hour: number, minute: number, offset = 0, after = Date.now()): number {
  const utcMinute = (((hour * 60 + minute - offset) % 1440) + 1440) % 1440;
  const midnight = after - (after % DAY);
  const candidate = midnight + utcMinute * MINUTE;
  return candidate > after ? candidate : candidate + DAY;
}

/** The member's local date at `at` (the digest's subject id). */
const localDate = (at: number, timeZone = "UTC") =>
  new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(
    new Date(at),
  );

/** A digest's subject: the company and the member's local date. */
const dayOf = (line: Line, at: number, timeZone = "UTC") => `${line.company.id}:${localDate(at, timeZone)}`;

const setMember = (companyId: string, user: BoardUser, sets: string, ...values: unknown[]) =>
  env.DB.prepare(`UPDATE line_members SET ${sets} WHERE company_id = ? AND user_id = ?`)
    .bind(...values, companyId, user.userId)
    .run();

const digestsOf = async (companyId: string, user?: BoardUser) =>
  (await noticesOf(companyId)).filter(
    (row) => row.kind === "digest" && (user === undefined || row.user_id === user.userId),
  );

/** The plain texts the line sent to `digits` that are digests (notices of other kinds are polls or name no digest). */
const digestTexts = (line: Line, digits: string) =>
  line
    .sent(jid(digits))
    .filter((sent) => sent.content.type === "text" && String(sent.content.text).includes("daily digest"))
    .map((sent) => String(sent.content.text));

async function failedRun(line: Line, issueId: string, finishedAt: number, status = "failed") {
  const id = crypto.randomUUID();
  await env.DB.prepare(
    `INSERT INTO heartbeat_runs (id, company_id, agent_id, status, invocation_source, wake_reason, issue_id,
       error_reason, created_at, started_at, finished_at)
     VALUES (?, ?, ?, ?, 'assignment', 'issue_assigned', ?, 'exit code 1', ?, ?, ?)`,
  )
    .bind(
      id,
      line.company.id,
      line.agent.id,
      status,
      issueId,
      finishedAt - MINUTE,
      finishedAt - MINUTE,
      finishedAt,
    )
    .run();
  return id;
}

describe("when the digest goes out", () => {
  it("sends it at 09:00 in the member's time zone and not a minute before", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    await setMember(line.company.id, line.owner, "time_zone = ?", KOLKATA);
    await requestApproval(line, "Buy the domain");
    const nine = nextLocal(9, 0, 330);

    await scheduledTick(nine - MINUTE);
    expect(await digestsOf(line.company.id)).toEqual([]);
    expect(digestTexts(line, ownerPhone)).toEqual([]);

    await scheduledTick(nine);
    const [digest] = await digestsOf(line.company.id);
    expect(digest).toMatchObject({
      user_id: line.owner.userId,
      subject_type: "digest",
      subject_id: dayOf(line, nine, KOLKATA),
      status: "sent",
      poll_options: null,
    });
    const [text] = digestTexts(line, ownerPhone);
    expect(text).toContain(line.company.name);
    expect(text).toContain("1 approval");
    expect(text).toContain("Buy the domain");
    expect(text).toContain(`/companies/${line.company.id}/approvals`);
  });

  it("sends one a day however many cron passes race for it, and the next on the next local day", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    await requestApproval(line, "Rent a server");
    const nine = nextLocal(9, 0);

    // Passes that build the digest at once: each finds none recorded, one insert wins.
    const db = database(env.DB);
    const built = await Promise.all([
      queueDueDigests(db, nine),
      queueDueDigests(db, nine),
      queueDueDigests(db, nine),
    ]);
    expect(await digestsOf(line.company.id)).toHaveLength(1);
    expect(built.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(1);
    await Promise.all([scheduledTick(nine), scheduledTick(nine), scheduledTick(nine + 1)]);
    await scheduledTick(nine + MINUTE);
    await scheduledTick(nine + 5 * 3_600_000);
    expect((await digestsOf(line.company.id)).map((row) => [row.subject_id, row.status])).toEqual([
      [dayOf(line, nine), "sent"],
    ]);
    expect(digestTexts(line, ownerPhone)).toHaveLength(1);

    await scheduledTick(nine + DAY);
    expect((await digestsOf(line.company.id)).map((row) => row.subject_id)).toEqual([
      dayOf(line, nine),
      dayOf(line, nine + DAY),
    ]);
    expect(digestTexts(line, ownerPhone)).toHaveLength(2);
  });

  it("sends it when the member's quiet hours end if 09:00 falls inside them", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner, { quiet: [8 * 60, 10 * 60 + 30] });
    await requestApproval(line, "Quiet purchase");
    const nine = nextLocal(9, 0);
    const quietEnds = nine + 90 * MINUTE;

    await scheduledTick(nine);
    await scheduledTick(quietEnds - MINUTE);
    expect(digestTexts(line, ownerPhone)).toEqual([]);
    expect((await digestsOf(line.company.id)).filter((row) => row.status === "sent")).toEqual([]);

    await scheduledTick(quietEnds);
    expect((await digestsOf(line.company.id)).map((row) => row.status)).toEqual(["sent"]);
    expect(digestTexts(line, ownerPhone)).toHaveLength(1);
  });

  it("sends it later the same day when the cron missed 09:00, never the next day", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    await requestApproval(line, "Late but today");
    const nine = nextLocal(9, 0);

    // The edge missed the morning: the first pass of the day is at 15:00.
    await scheduledTick(nine + 6 * 3_600_000);
    expect((await digestsOf(line.company.id)).map((row) => row.status)).toEqual(["sent"]);
    expect(digestTexts(line, ownerPhone)).toHaveLength(1);

    // The next day the line is down at 09:00 and back only the day after: that digest is dropped.
    await lineGoesDown(line);
    await scheduledTick(nine + DAY);
    expect((await digestsOf(line.company.id)).map((row) => row.status)).toEqual(["sent", "queued"]);
    await lineComesBack(line);
    await scheduledTick(nine + 2 * DAY - 2 * 3_600_000);
    const rows = await digestsOf(line.company.id);
    expect(rows.map((row) => [row.subject_id, row.status])).toEqual([
      [dayOf(line, nine), "sent"],
      [dayOf(line, nine + DAY), "dropped"],
    ]);
    expect(digestTexts(line, ownerPhone)).toHaveLength(1);
  });
});

describe("who gets a digest", () => {
  it("sends none to a member who did not choose it, an unverified number, a removed member, or one with nothing to report", async () => {
    const line = await linkedLine();
    await requestApproval(line, "Something to decide");
    const notChosen = await member(line.company.id, "member");
    const notChosenPhone = await linkNumber(line.company.id, notChosen);
    await setMember(line.company.id, notChosen, "notify = ?", JSON.stringify(["approvals", "questions"]));
    const unverified = await member(line.company.id, "member");
    const unverifiedPhone = await linkNumber(line.company.id, unverified, { verified: false });
    const removed = await member(line.company.id, "member");
    const removedPhone = await linkNumber(line.company.id, removed);
    await env.DB.prepare("DELETE FROM company_memberships WHERE company_id = ? AND user_id = ?")
      .bind(line.company.id, removed.userId)
      .run();
    const idle = await linkedLine();
    const idlePhone = await linkNumber(idle.company.id, idle.owner);
    // The one who chose it, verified, with an approval to decide: the digest does go out.
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    const nine = nextLocal(9, 0);

    await scheduledTick(nine);
    await scheduledTick(nine + 3_600_000);

    expect(digestTexts(line, ownerPhone)).toHaveLength(1);
    for (const digits of [notChosenPhone, unverifiedPhone, removedPhone])
      expect(digestTexts(line, digits)).toEqual([]);
    expect(digestTexts(idle, idlePhone)).toEqual([]);
    expect(idle.sent(jid(idlePhone))).toEqual([]);
    const recorded = [...(await digestsOf(line.company.id)), ...(await digestsOf(idle.company.id))];
    expect(recorded.filter((row) => row.status !== "dropped").map((row) => row.user_id)).toEqual([
      line.owner.userId,
    ]);

    // Its day is settled: something that comes up later that day waits for tomorrow's digest.
    await requestApproval(idle, "Afternoon purchase");
    await scheduledTick(nine + 5 * 3_600_000);
    expect(digestTexts(idle, idlePhone)).toEqual([]);
    await scheduledTick(nine + DAY);
    expect(digestTexts(idle, idlePhone)).toHaveLength(1);
  });
});

describe("what a digest says", () => {
  it("lists what this member's role may act on, in this company only", async () => {
    const line = await linkedLine();
    const other = await linkedLine();
    await requestApproval(line, "Alpha purchase");
    await requestApproval(other, "Beta purchase");
    const colleague = await member(line.company.id, "member");
    const colleaguePhone = await linkNumber(line.company.id, colleague);
    await setMember(line.company.id, colleague, "notify = ?", JSON.stringify(["digest"]));
    // The colleague is also a member of the other company, on its own line.
    await env.DB.prepare(
      "INSERT INTO company_memberships (company_id, user_id, role, created_at) VALUES (?, ?, 'member', ?)",
    )
      .bind(other.company.id, colleague.userId, Date.now())
      .run();
    const colleagueOtherPhone = await linkNumber(other.company.id, colleague);
    const viewer = await member(line.company.id, "viewer");
    const viewerPhone = await linkNumber(line.company.id, viewer);
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    await setMember(line.company.id, line.owner, "notify = ?", JSON.stringify(["digest"]));
    await env.DB.prepare("UPDATE agents SET status = 'paused', pause_reason = 'budget' WHERE id = ?")
      .bind(line.agent.id)
      .run();

    // A question the agent asks the colleague (who handed the issue over).
    const asked = await seedIssue(line.company, {
      createdByUserId: colleague.userId,
      assigneeAgentId: line.agent.id,
    });
    const question = await call("POST", `/api/issues/${asked.id}/questions`, {
      body: { body: "Which region should the server be in?" },
      headers: line.agent.headers,
    });
    expect(question.status).toBe(201);
    // A run that failed on an issue the viewer created, and an older one that no longer counts.
    const nine = nextLocal(9, 0);
    const watched = await seedIssue(line.company, { createdByUserId: viewer.userId });
    const runId = await failedRun(line, watched.id, nine - 3_600_000, "timed_out");
    const oldRunId = await failedRun(line, watched.id, nine - 25 * 3_600_000);

    await scheduledTick(nine);

    const [colleagueText, ...more] = digestTexts(line, colleaguePhone);
    expect(more).toEqual([]);
    expect(colleagueText).toContain(line.company.name);
    expect(colleagueText).toContain("Alpha purchase");
    expect(colleagueText).not.toContain("Beta purchase");
    expect(colleagueText).toContain("Which region should the server be in?");
    expect(colleagueText).toContain(`/issues/${asked.identifier}`);
    expect(colleagueText).not.toContain("paused");

    const [otherText] = digestTexts(other, colleagueOtherPhone);
    expect(otherText).toContain(other.company.name);
    expect(otherText).toContain("Beta purchase");
    expect(otherText).not.toContain("Alpha purchase");
    expect(otherText).not.toContain("Which region");

    const [viewerText] = digestTexts(line, viewerPhone);
    expect(viewerText).toContain(`/runs/${runId}`);
    expect(viewerText).toContain("timed out");
    expect(viewerText).not.toContain(oldRunId);
    expect(viewerText).not.toContain("Alpha purchase");
    expect(viewerText).not.toContain("approval");
    expect(viewerText).not.toContain("Which region");

    const [ownerText] = digestTexts(line, ownerPhone);
    expect(ownerText).toContain("Alpha purchase");
    expect(ownerText).toContain(`${line.agent.name}`);
    expect(ownerText).toContain("paused");
    expect(ownerText).toContain(`/agents/${line.agent.id}`);
    // The question asks the colleague, not the owner; the run is not on an issue the owner watches.
    expect(ownerText).not.toContain("Which region");
    expect(ownerText).not.toContain(runId);
  });
});
