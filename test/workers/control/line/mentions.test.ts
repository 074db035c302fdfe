// Mentions and assignments on the company's line (issue 30, docs/company-line.md "What goes out"): an
// @-mention or an assignment that lands in a person's inbox also reaches their verified number as a
// `mentions` notice, once per write, never to the actor, a removed member or one who switched it off;
// a reply quoting it comments on the issue as them. Asserted on the line_notices rows, on what the
// fake bridge was asked to send, and on the comments the issue has.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, scheduledTick } from "../../helpers";
import { type Line, linkedLine } from "../../mcp/whatsapp-line";
import { eventually } from "../../patience";
import { type BoardUser, seedIssue } from "../helpers";
import { answerRow, reply, replyTo, textsTo } from "./answers-world";
import { jid, linkNumber, member, noticesOf } from "./notices-world";

const WITH_MENTIONS = ["approvals", "questions", "mentions"];

interface Person {
  user: BoardUser;
  name: string;
  phone: string;
}

async function named(user: BoardUser, name: string) {
  await env.DB.prepare("UPDATE users SET name = ? WHERE id = ?").bind(name, user.userId).run();
}

/** A member called `name` with a verified number (receiving `notify`, mentions by default). */
async function person(
  line: Line,
  name: string,
  options: { role?: "member" | "viewer"; notify?: string[]; quiet?: [number, number] } = {},
): Promise<Person> {
  const user = await member(line.company.id, options.role ?? "member");
  await named(user, name);
  const phone = await linkNumber(line.company.id, user, {
    notify: options.notify ?? WITH_MENTIONS,
    ...(options.quiet ? { quiet: options.quiet } : {}),
  });
  return { user, name, phone };
}

/** The line's owner, named, with a verified number that receives mentions. */
async function ownerOf(line: Line, name = "Olivia Owner"): Promise<Person> {
  await named(line.owner, name);
  const phone = await linkNumber(line.company.id, line.owner, { notify: WITH_MENTIONS });
  return { user: line.owner, name, phone };
}

const textsSentTo = (line: Line, to: Person) =>
  line.sent(jid(to.phone)).map((sent) => String(sent.content.text ?? JSON.stringify(sent.content)));

async function comment(issueId: string, by: { headers: Record<string, string> }, body: string) {
  const res = await call<{ id: string }>("POST", `/api/issues/${issueId}/comments`, {
    body: { body },
    headers: by.headers,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

const notificationsOf = (userId: string) =>
  env.DB.prepare("SELECT id, kind FROM notifications WHERE user_id = ? ORDER BY created_at, id")
    .bind(userId)
    .all<{ id: string; kind: string }>()
    .then((rows) => rows.results);

const sentAll = (companyId: string) => async () =>
  (await noticesOf(companyId)).every((row) => row.status !== "queued");

describe("a mention or an assignment reaches the person's phone", () => {
  it("a comment @mentioning a member sends them who, which issue and a link, and nobody else", async () => {
    const line = await linkedLine();
    const owner = await ownerOf(line);
    const bea = await person(line, "Bea Mention");
    const other = await person(line, "Otto Bystander");
    const issue = await seedIssue(line.company, { title: "Fix the invoice export" });

    await comment(issue.id, owner.user, "@Bea Mention can you check the totals?");

    await eventually(async () => (await noticesOf(line.company.id))[0]?.status === "sent");
    const [notification] = await notificationsOf(bea.user.userId);
    const rows = await noticesOf(line.company.id);
    expect(rows.map((row) => [row.user_id, row.kind, row.subject_type, row.subject_id, row.status])).toEqual([
      [bea.user.userId, "mentions", "notification", notification?.id, "sent"],
    ]);
    const [text] = textsSentTo(line, bea);
    expect(text).toContain(line.company.name);
    expect(text).toContain(`${owner.name} mentioned you on ${issue.identifier} (Fix the invoice export)`);
    expect(text).toContain("can you check the totals?");
    expect(text).toContain(`http://switchboard.test/issues/${issue.identifier}`);
    expect(textsSentTo(line, owner)).toEqual([]);
    expect(textsSentTo(line, other)).toEqual([]);
  });

  it("assigning an issue to a person, on create or by PATCH, tells them", async () => {
    const line = await linkedLine();
    const owner = await ownerOf(line);
    const bea = await person(line, "Bea Assignee");

    const created = await call<{ id: string; identifier: string }>(
      "POST",
      `/api/companies/${line.company.id}/issues`,
      {
        body: { title: "Renew the certificate", assigneeUserId: bea.user.userId },
        headers: owner.user.headers,
      },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const later = await seedIssue(line.company, { title: "Rotate the keys" });
    const patched = await call("PATCH", `/api/issues/${later.id}`, {
      body: { assigneeUserId: bea.user.userId },
      headers: owner.user.headers,
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    await eventually(
      async () => (await noticesOf(line.company.id)).filter((r) => r.status === "sent").length === 2,
    );
    const texts = textsSentTo(line, bea);
    expect(texts).toHaveLength(2);
    expect(texts[0]).toContain(
      `${owner.name} assigned you ${created.body.identifier} (Renew the certificate).`,
    );
    expect(texts[1]).toContain(`${owner.name} assigned you ${later.identifier} (Rotate the keys).`);
    expect(texts[1]).toContain(`/issues/${later.identifier}`);
  });

  it("one write that assigns and mentions a person is one notice; the inbox keeps both", async () => {
    const line = await linkedLine();
    const owner = await ownerOf(line);
    const bea = await person(line, "Bea Both");
    const issue = await seedIssue(line.company, { title: "Ship the beta" });

    const patched = await call("PATCH", `/api/issues/${issue.id}`, {
      body: { assigneeUserId: bea.user.userId, comment: "@Bea Both yours now" },
      headers: owner.user.headers,
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    await eventually(sentAll(line.company.id));
    expect((await notificationsOf(bea.user.userId)).map((row) => row.kind).sort()).toEqual([
      "assigned",
      "mention",
    ]);
    expect((await noticesOf(line.company.id)).map((row) => [row.user_id, row.status])).toEqual([
      [bea.user.userId, "sent"],
    ]);
    const texts = textsSentTo(line, bea);
    expect(texts).toHaveLength(1);
    expect(texts[0]).toContain(
      `${owner.name} assigned you ${issue.identifier} (Ship the beta) and mentioned you`,
    );
    expect(texts[0]).toContain("yours now");
  });
});

describe("who gets nothing", () => {
  it("never the actor: mentioning yourself beside a colleague tells only the colleague", async () => {
    const line = await linkedLine();
    const owner = await ownerOf(line, "Olga Self");
    const bea = await person(line, "Bea Colleague");
    const issue = await seedIssue(line.company);

    await comment(issue.id, owner.user, "@Olga Self and @Bea Colleague: both of us");
    const assigned = await call("PATCH", `/api/issues/${issue.id}`, {
      body: { assigneeUserId: owner.user.userId },
      headers: owner.user.headers,
    });
    expect(assigned.status).toBe(200);

    await eventually(async () => (await noticesOf(line.company.id))[0]?.status === "sent");
    await scheduledTick(Date.now());
    expect((await noticesOf(line.company.id)).map((row) => row.user_id)).toEqual([bea.user.userId]);
    expect(textsSentTo(line, bea)).toHaveLength(1);
    expect(textsSentTo(line, owner)).toEqual([]);
  });

  it("not a member who switched mentions off over the API; the one who kept them gets theirs", async () => {
    const line = await linkedLine();
    const owner = await ownerOf(line);
    const quiet = await person(line, "Quinn Optout");
    const keen = await person(line, "Kim Keen");
    const off = await call<{ notify: string[] }>(
      "PATCH",
      `/api/companies/${line.company.id}/line/members/me`,
      {
        body: { notify: ["approvals", "questions"] },
        headers: quiet.user.headers,
      },
    );
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    const on = await call<{ notify: string[] }>(
      "PATCH",
      `/api/companies/${line.company.id}/line/members/me`,
      {
        body: { notify: ["mentions"] },
        headers: keen.user.headers,
      },
    );
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(on.body.notify).toEqual(["mentions"]);
    const issue = await seedIssue(line.company);

    await comment(issue.id, owner.user, "@Quinn Optout and @Kim Keen, have a look");

    await eventually(async () => (await noticesOf(line.company.id))[0]?.status === "sent");
    expect((await noticesOf(line.company.id)).map((row) => row.user_id)).toEqual([keen.user.userId]);
    expect(textsSentTo(line, quiet)).toEqual([]);
    expect(await notificationsOf(quiet.user.userId)).toHaveLength(1);
  });

  it("not a member removed before the notice went out, nor one removed before the mention", async () => {
    const line = await linkedLine();
    const owner = await ownerOf(line);
    const gone = await person(line, "Gus Gone");
    const leaving = await person(line, "Lea Leaving", {
      // In quiet hours now, so the notice is queued and still waiting when she is removed.
      quiet: quietNow(),
    });
    const stays = await person(line, "Sam Stays");
    const issue = await seedIssue(line.company);
    const removed = await call("DELETE", `/api/companies/${line.company.id}/members/${gone.user.userId}`, {
      headers: owner.user.headers,
    });
    expect(removed.status, JSON.stringify(removed.body)).toBeLessThan(300);

    await comment(issue.id, owner.user, "@Gus Gone @Lea Leaving @Sam Stays please review");
    await eventually(async () =>
      (await noticesOf(line.company.id)).some(
        (row) => row.user_id === stays.user.userId && row.status === "sent",
      ),
    );
    const held = (await noticesOf(line.company.id)).find((row) => row.user_id === leaving.user.userId);
    expect(held?.status).toBe("queued");
    await env.DB.prepare("DELETE FROM company_memberships WHERE company_id = ? AND user_id = ?")
      .bind(line.company.id, leaving.user.userId)
      .run();
    await scheduledTick(held?.not_before ?? Date.now());

    const rows = await noticesOf(line.company.id);
    expect(rows.map((row) => [row.user_id, row.status]).sort()).toEqual(
      [
        [leaving.user.userId, "dropped"],
        [stays.user.userId, "sent"],
      ].sort(),
    );
    expect(textsSentTo(line, gone)).toEqual([]);
    expect(textsSentTo(line, leaving)).toEqual([]);
    expect(textsSentTo(line, stays)).toHaveLength(1);
  });
});

/** Quiet hours (UTC minutes) from an hour ago to an hour from now. */
function quietNow(): [number, number] {
  const minute = Math.floor((Date.now() % 86_400_000) / 60_000);
  return [(minute + 1380) % 1440, (minute + 60) % 1440];
}

describe("quiet hours and answers", () => {
  it("holds a mention through quiet hours and sends it when they end", async () => {
    const line = await linkedLine();
    const owner = await ownerOf(line);
    const bea = await person(line, "Bea Sleeping", { quiet: quietNow() });
    const issue = await seedIssue(line.company);

    await comment(issue.id, owner.user, "@Bea Sleeping for the morning");

    const [held] = await noticesOf(line.company.id);
    const end = Date.now() - (Date.now() % 60_000) + 60 * 60_000;
    expect(held).toMatchObject({ kind: "mentions", status: "queued", not_before: end });
    await scheduledTick(end - 60_000);
    expect(textsSentTo(line, bea)).toEqual([]);
    await scheduledTick(end);
    expect((await noticesOf(line.company.id))[0]?.status).toBe("sent");
    expect(textsSentTo(line, bea)).toHaveLength(1);
  });

  it("an agent's mention names the agent; one read on the dashboard while held is dropped, not sent", async () => {
    const line = await linkedLine();
    const bea = await person(line, "Bea Agentwatch");
    const held = await person(line, "Hal Held", { quiet: quietNow() });
    const issue = await seedIssue(line.company, { title: "Tune the cache" });

    await comment(issue.id, line.agent, "@Bea Agentwatch @Hal Held done, please verify");
    await eventually(async () =>
      (await noticesOf(line.company.id)).some(
        (row) => row.user_id === bea.user.userId && row.status === "sent",
      ),
    );
    expect(textsSentTo(line, bea)[0]).toContain(`${line.agent.name} mentioned you on ${issue.identifier}`);
    const [unread] = await notificationsOf(held.user.userId);
    const read = await call("POST", `/api/notifications/${unread?.id}/read`, { headers: held.user.headers });
    expect(read.status).toBe(200);
    const waiting = (await noticesOf(line.company.id)).find((row) => row.user_id === held.user.userId);
    await scheduledTick(waiting?.not_before ?? Date.now());

    const dropped = (await noticesOf(line.company.id)).find((row) => row.user_id === held.user.userId);
    expect(dropped).toMatchObject({ status: "dropped", error: "already read in the dashboard's inbox" });
    expect(textsSentTo(line, held)).toEqual([]);
  });

  it("a reply quoting the notice comments on the issue as the member and confirms quoting the reply", async () => {
    const line = await linkedLine();
    const owner = await ownerOf(line);
    const bea = await person(line, "Bea Replies");
    const issue = await seedIssue(line.company, { title: "Choose a font" });
    await comment(issue.id, owner.user, "@Bea Replies which font?");
    await eventually(async () => (await noticesOf(line.company.id))[0]?.status === "sent");
    const [notice] = await noticesOf(line.company.id);
    const beaJid = jid(bea.phone);

    const replyId = await reply(line, beaJid, notice?.wa_message_id ?? "", "Inter, 14px");

    const done = await replyTo(
      line,
      { user: bea.user, name: bea.name, jid: beaJid, phone: bea.phone },
      "Commented",
    );
    expect(done).toEqual({
      text: `Commented on ${issue.identifier} — recorded for ${bea.name}.`,
      quoted: replyId,
    });
    const comments = await call<Array<{ body: string; authorUserId: string | null }>>(
      "GET",
      `/api/issues/${issue.id}/comments`,
      { headers: owner.user.headers },
    );
    expect(comments.body.map((c) => [c.authorUserId, c.body])).toContainEqual([
      bea.user.userId,
      "Inter, 14px",
    ]);
    expect(await answerRow(line.company.id, replyId)).toMatchObject({
      outcome: "applied",
      detail: "commented",
    });
  });

  it("a viewer's reply is refused with the reason and posts nothing", async () => {
    const line = await linkedLine();
    const owner = await ownerOf(line);
    const viewer = await person(line, "Vic Viewer", { role: "viewer" });
    const issue = await seedIssue(line.company);
    await comment(issue.id, owner.user, "@Vic Viewer FYI");
    await eventually(async () => (await noticesOf(line.company.id))[0]?.status === "sent");
    const [notice] = await noticesOf(line.company.id);
    const viewerJid = jid(viewer.phone);

    await reply(line, viewerJid, notice?.wa_message_id ?? "", "Thanks!");

    const as = { user: viewer.user, name: viewer.name, jid: viewerJid, phone: viewer.phone };
    const refusal = await replyTo(line, as, "Not applied");
    expect(refusal.text).toMatch(/^Not applied, nothing changed: .*[Vv]iewer/);
    const comments = await call<unknown[]>("GET", `/api/issues/${issue.id}/comments`, {
      headers: owner.user.headers,
    });
    expect(comments.body).toHaveLength(1);
    expect(textsTo(line, as)).toHaveLength(2);
  });
});
