// Comments (list, cursor, one, create), @-mention wakes, and the Mine inbox.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { boardUser, seedAgent, seedIssue } from "../helpers";
import { type Comment, issueRow, newIssue, patchIssue, rowsOf, wakesOf, world } from "./fixtures";

const comment = (headers: Record<string, string>, issueId: string, body: unknown) =>
  call<Comment>("POST", `/api/issues/${issueId}/comments`, {
    headers,
    body: typeof body === "string" ? { body } : body,
  });

describe("comments", () => {
  it("creates, lists oldest first with an after cursor, reads one, and bumps the issue", async () => {
    const { owner, company, engineer } = await world();
    const issue = await newIssue(owner.headers, company);
    await env.DB.prepare("UPDATE issues SET updated_at = 1 WHERE id = ?").bind(issue.id).run();
    const first = await comment(owner.headers, issue.id, "First");
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      issueId: issue.id,
      companyId: company.id,
      body: "First",
      authorUserId: owner.userId,
      authorAgentId: null,
    });
    expect(Number((await issueRow(issue.id))?.updated_at)).toBeGreaterThan(1);
    const second = await comment(engineer.headers, issue.identifier, "Second");
    expect(second.body.authorAgentId).toBe(engineer.id);
    const third = await comment(engineer.headers, issue.id, "Third");
    const list = await call<Comment[]>("GET", `/api/issues/${issue.id}/comments`, {
      headers: engineer.headers,
    });
    expect(list.body.map((c) => c.body)).toEqual(["First", "Second", "Third"]);
    const after = await call<Comment[]>(
      "GET",
      `/api/issues/${issue.id}/comments?after=${first.body.id}&limit=1`,
      {
        headers: owner.headers,
      },
    );
    expect(after.body.map((c) => c.id)).toEqual([second.body.id]);
    const one = await call<Comment>("GET", `/api/issues/${issue.id}/comments/${third.body.id}`, {
      headers: owner.headers,
    });
    expect(one.body).toEqual(third.body);
    const elsewhere = await newIssue(owner.headers, company);
    expect(
      (await call("GET", `/api/issues/${elsewhere.id}/comments/${third.body.id}`, { headers: owner.headers }))
        .status,
    ).toBe(404);
    expect(
      (
        await call("GET", `/api/issues/${issue.id}/comments?after=${crypto.randomUUID()}`, {
          headers: owner.headers,
        })
      ).status,
    ).toBe(404);
    for (const body of [
      { body: "" },
      { body: "x".repeat(65_537) },
      { body: "x", extra: true },
      { text: "x" },
      {},
    ])
      expect((await comment(owner.headers, issue.id, body)).status).toBe(400);
    const rows = await rowsOf("SELECT id FROM issue_comments WHERE issue_id = ?", issue.id);
    expect(rows).toHaveLength(3);
    const actions = await rowsOf<{ action: string }>(
      "SELECT action FROM activity_log WHERE entity_id = ? AND action = 'issue.comment_added'",
      issue.id,
    );
    expect(actions).toHaveLength(3);
  });
});

describe("@-mentions", () => {
  async function mentionWorld() {
    const base = await world();
    const builder = await seedAgent(base.company.id, { name: "Builder" });
    const ada = await seedAgent(base.company.id, { name: "Ada" });
    const adaLovelace = await seedAgent(base.company.id, { name: "Ada Lovelace" });
    const sleeper = await seedAgent(base.company.id, { name: "Sleeper", status: "paused" });
    const other = await world();
    const zed = await seedAgent(other.company.id, { name: "Zed" });
    const issue = await seedIssue(base.company);
    return { ...base, builder, ada, adaLovelace, sleeper, zed, issue };
  }

  it("wakes plain, multi-word and linked mentions once each, never the author", async () => {
    const w = await mentionWorld();
    const res = await comment(
      w.builder.headers,
      w.issue.id,
      `@builder note to self. @ada lovelace, please review; then [@Someone](agent://${w.ada.id}). Thanks @ADA LOVELACE!`,
    );
    expect(res.status).toBe(201);
    const wakes = await wakesOf(w.issue.id);
    expect(wakes.map((run) => run.agent_id).sort()).toEqual([w.ada.id, w.adaLovelace.id].sort());
    for (const run of wakes)
      expect(run).toMatchObject({
        status: "queued",
        wake_reason: "issue_comment_mentioned",
        comment_id: res.body.id,
        invocation_source: "mention",
      });
  });

  it("records a paused agent's wake as cancelled and ignores other companies, code and emails", async () => {
    const w = await mentionWorld();
    const res = await comment(
      w.owner.headers,
      w.issue.id,
      [
        "@Sleeper wake up",
        `@Zed and [@Zed](agent://${w.zed.id}) are elsewhere`,
        "`@Builder` in code, and mail builder@Builder.example",
        "```",
        "@Ada in a fence",
        "```",
        "@Builders is not a name",
      ].join("\n"),
    );
    expect(res.status).toBe(201);
    const wakes = await wakesOf(w.issue.id);
    expect(wakes).toEqual([
      expect.objectContaining({ agent_id: w.sleeper.id, status: "cancelled", error_reason: "agent_paused" }),
    ]);
    const requested = await rowsOf<{ requested_by_user_id: string }>(
      "SELECT requested_by_user_id FROM heartbeat_runs WHERE issue_id = ?",
      w.issue.id,
    );
    expect(requested).toEqual([{ requested_by_user_id: w.owner.userId }]);
  });

  it("wakes from the comment of a PATCH too, in the same batch", async () => {
    const w = await mentionWorld();
    const res = await patchIssue(w.owner.headers, w.issue.id, {
      priority: "high",
      comment: "@Builder take this",
    });
    expect(res.status).toBe(200);
    expect((await wakesOf(w.issue.id)).map((run) => [run.agent_id, run.comment_id])).toEqual([
      [w.builder.id, res.body.comment?.id],
    ]);
    const refused = await patchIssue(w.owner.headers, w.issue.id, { status: "done", comment: "@Ada done?" });
    expect(refused.status).toBe(422);
    expect(await wakesOf(w.issue.id)).toHaveLength(1);
  });
});

describe("GET /agents/me/inbox/mine", () => {
  type Entry = {
    id: string;
    myLastTouchAt: string | null;
    lastExternalCommentAt: string | null;
    assignedToMeAt: string | null;
    isUnreadForMe: boolean;
  };

  const unreadCount = async (headers: Record<string, string>, query = "") => {
    const res = await call<{ unreadCount: number }>("GET", `/api/agents/me/inbox/mine/unread-count${query}`, {
      headers,
    });
    return { status: res.status, count: res.body.unreadCount };
  };

  it("a new assignment by someone else is unread until opened or read; taking it oneself is not", async () => {
    const member = await boardUser();
    const { owner, company, engineer } = await world({ members: [member] });
    expect(await unreadCount(member.headers)).toEqual({ status: 200, count: 0 });
    const handed = await newIssue(owner.headers, company, { title: "Handed", assigneeUserId: member.userId });
    const taken = await newIssue(member.headers, company, { title: "Taken", assigneeUserId: member.userId });
    const inbox = await call<Entry[]>("GET", "/api/agents/me/inbox/mine", { headers: member.headers });
    const byId = new Map(inbox.body.map((entry) => [entry.id, entry]));
    expect(byId.get(handed.id)).toMatchObject({ isUnreadForMe: true, assignedToMeAt: expect.any(String) });
    expect(byId.get(taken.id)).toMatchObject({ isUnreadForMe: false, assignedToMeAt: null });
    expect(await unreadCount(member.headers)).toEqual({ status: 200, count: 1 });
    expect(await unreadCount(engineer.headers, `?userId=${member.userId}`)).toEqual({
      status: 200,
      count: 1,
    });
    expect((await unreadCount(owner.headers, `?userId=${member.userId}`)).status).toBe(403);
    expect((await unreadCount(engineer.headers)).status).toBe(400);

    expect((await call("POST", `/api/issues/${handed.id}/read`, { headers: member.headers })).status).toBe(
      200,
    );
    expect(await unreadCount(member.headers)).toEqual({ status: 200, count: 0 });
  });

  it("lists what the user created, is assigned or commented on, with unread flags", async () => {
    const member = await boardUser();
    const { owner, company, engineer } = await world({ members: [member] });
    const created = await newIssue(member.headers, company, { title: "Created" });
    const assigned = await newIssue(owner.headers, company, {
      title: "Assigned",
      assigneeUserId: member.userId,
    });
    const commented = await newIssue(owner.headers, company, { title: "Commented" });
    const unrelated = await newIssue(owner.headers, company, { title: "Unrelated" });
    const oldDone = await newIssue(member.headers, company, { title: "Old" });
    const recentDone = await newIssue(member.headers, company, { title: "Recent" });
    const day = 24 * 60 * 60 * 1000;
    const t0 = Date.now() - 30 * day;
    const at = (minutes: number) => t0 + minutes * 60_000;
    const setIssue = (id: string, createdAt: number, updatedAt: number, extra = "") =>
      env.DB.prepare(`UPDATE issues SET created_at = ?, updated_at = ?${extra} WHERE id = ?`)
        .bind(createdAt, updatedAt, id)
        .run();
    const add = async (headers: Record<string, string>, issueId: string, when: number) => {
      const res = await comment(headers, issueId, "note");
      await env.DB.prepare("UPDATE issue_comments SET created_at = ? WHERE id = ?")
        .bind(when, res.body.id)
        .run();
    };
    await add(engineer.headers, created.id, at(5));
    await add(member.headers, commented.id, at(6));
    await add(engineer.headers, commented.id, at(4));
    await add(engineer.headers, unrelated.id, at(7));
    await setIssue(created.id, at(1), at(5));
    await setIssue(assigned.id, at(2), at(3));
    await setIssue(commented.id, at(3), at(6));
    await setIssue(oldDone.id, at(0), at(0), `, status = 'done', completed_at = ${t0}`);
    await setIssue(recentDone.id, at(0), Date.now(), `, status = 'done', completed_at = ${Date.now()}`);

    const inbox = await call<Entry[]>("GET", "/api/agents/me/inbox/mine", { headers: member.headers });
    expect(inbox.status).toBe(200);
    expect(inbox.body.map((entry) => entry.id)).toEqual([
      recentDone.id,
      commented.id,
      created.id,
      assigned.id,
    ]);
    const byId = new Map(inbox.body.map((entry) => [entry.id, entry]));
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(byId.get(created.id)).toMatchObject({
      myLastTouchAt: iso(at(1)),
      lastExternalCommentAt: iso(at(5)),
      isUnreadForMe: true,
    });
    expect(byId.get(commented.id)).toMatchObject({
      myLastTouchAt: iso(at(6)),
      lastExternalCommentAt: iso(at(4)),
      isUnreadForMe: false,
    });
    // Handed to them by someone else and not opened since: news, though nobody commented.
    expect(byId.get(assigned.id)).toMatchObject({
      myLastTouchAt: null,
      lastExternalCommentAt: null,
      assignedToMeAt: expect.any(String),
      isUnreadForMe: true,
    });

    // The header's count (SQL) says what the list's flags say (JavaScript): created and assigned.
    expect(inbox.body.filter((entry) => entry.isUnreadForMe)).toHaveLength(2);
    expect(await unreadCount(member.headers)).toEqual({ status: 200, count: 2 });

    const read = await call("POST", `/api/issues/${created.id}/read`, { headers: member.headers });
    expect(read.status).toBe(200);
    expect(await unreadCount(member.headers)).toEqual({ status: 200, count: 1 });
    const after = await call<Entry[]>("GET", `/api/agents/me/inbox/mine?userId=${member.userId}`, {
      headers: member.headers,
    });
    expect(after.body.find((entry) => entry.id === created.id)?.isUnreadForMe).toBe(false);

    const asAgent = await call<Entry[]>("GET", `/api/agents/me/inbox/mine?userId=${member.userId}`, {
      headers: engineer.headers,
    });
    expect(asAgent.status).toBe(200);
    expect(asAgent.body.map((entry) => entry.id)).toEqual(after.body.map((entry) => entry.id));
    expect((await call("POST", `/api/issues/${created.id}/read`, { headers: engineer.headers })).status).toBe(
      403,
    );
  });

  it("answers 403 for another board user's inbox, 400 and 404 for agents", async () => {
    const member = await boardUser();
    const { owner, engineer } = await world({ members: [member] });
    const stranger = await boardUser();
    const get = (headers: Record<string, string>, query = "") =>
      call("GET", `/api/agents/me/inbox/mine${query}`, { headers });
    expect((await get(owner.headers, `?userId=${member.userId}`)).status).toBe(403);
    expect((await get(engineer.headers)).status).toBe(400);
    expect((await get(engineer.headers, `?userId=${stranger.userId}`)).status).toBe(404);
    expect((await get(stranger.headers)).status).toBe(200);
  });
});
