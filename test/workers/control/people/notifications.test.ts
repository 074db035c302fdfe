// People as assignees and @-mentions of people: the notifications they create, the inbox API
// (list, unread count, mark read), who sees what, and the live event on the company's feed.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { addMembership, type BoardUser, boardUser, seedCompany } from "../helpers";
import { type Comment, type ErrorBody, newIssue, patchIssue, rowsOf, world } from "../issues/fixtures";
import { listen, signedInOwner } from "../live/sockets";

interface Notification {
  id: string;
  companyId: string;
  kind: "mention" | "assigned";
  issue: { id: string; identifier: string; title: string };
  commentId: string | null;
  actor: { type: string; id: string; name: string | null };
  createdAt: string;
  readAt: string | null;
}
interface NotificationList {
  items: Notification[];
  unreadCount: number;
  nextBefore: string | null;
}

const rename = (userId: string, name: string) =>
  env.DB.prepare("UPDATE users SET name = ? WHERE id = ?").bind(name, userId).run();

const inbox = (who: BoardUser, query = "") =>
  call<NotificationList>("GET", `/api/notifications${query}`, { headers: who.headers });

const unread = async (who: BoardUser) =>
  (await call<{ unreadCount: number }>("GET", "/api/notifications/unread-count", { headers: who.headers }))
    .body.unreadCount;

const comment = (who: BoardUser, issueId: string, body: string) =>
  call<Comment & { authorName: string | null }>("POST", `/api/issues/${issueId}/comments`, {
    headers: who.headers,
    body: { body },
  });

async function team() {
  const ada = await boardUser();
  const grace = await boardUser();
  const { owner, company, engineer } = await world({ members: [ada, grace] });
  await rename(owner.userId, "Olive Owner");
  await rename(ada.userId, "Ada Lovelace");
  await rename(grace.userId, "Grace");
  return { owner, ada, grace, company, engineer };
}

describe("@-mentions of people", () => {
  it("notifies each mentioned member once (case-insensitive, longest name, not in code, not the author)", async () => {
    const { owner, ada, grace, company } = await team();
    const issue = await newIssue(owner.headers, company);
    const res = await comment(
      owner,
      issue.id,
      "@ada lovelace and @Grace, see `@Olive Owner` — @Olive Owner too; again @ADA LOVELACE; mail grace@x.io",
    );
    expect(res.status).toBe(201);
    const rows = await rowsOf<{ user_id: string; kind: string; comment_id: string; actor_id: string }>(
      "SELECT user_id, kind, comment_id, actor_id FROM notifications WHERE issue_id = ? ORDER BY user_id",
      issue.id,
    );
    expect(rows).toEqual(
      [ada.userId, grace.userId]
        .sort()
        .map((user_id) => ({ user_id, kind: "mention", comment_id: res.body.id, actor_id: owner.userId })),
    );
    const adaInbox = await inbox(ada);
    expect(adaInbox.status).toBe(200);
    expect(adaInbox.body.unreadCount).toBe(1);
    expect(adaInbox.body.items).toEqual([
      expect.objectContaining({
        kind: "mention",
        companyId: company.id,
        issue: { id: issue.id, identifier: issue.identifier, title: issue.title },
        commentId: res.body.id,
        actor: { type: "user", id: owner.userId, name: "Olive Owner" },
        readAt: null,
      }),
    ]);
    expect((await inbox(owner)).body.items).toEqual([]);
  });

  it("mentions in PATCH's comment notify too, and an agent mention still wakes the agent", async () => {
    const { owner, ada, company, engineer } = await team();
    const issue = await newIssue(owner.headers, company);
    const res = await patchIssue(owner.headers, issue.id, {
      comment: `@Ada Lovelace please pair with @${engineer.name}`,
    });
    expect(res.status).toBe(200);
    expect((await inbox(ada)).body.items.map((n) => n.kind)).toEqual(["mention"]);
    const wakes = await rowsOf("SELECT agent_id FROM heartbeat_runs WHERE issue_id = ?", issue.id);
    expect(wakes).toContainEqual({ agent_id: engineer.id });
  });

  it("a non-member's name mentions nobody", async () => {
    const { owner, company } = await team();
    const outsider = await boardUser();
    await rename(outsider.userId, "Mallory Outside");
    const issue = await newIssue(owner.headers, company);
    await comment(owner, issue.id, "@Mallory Outside hello");
    expect(await rowsOf("SELECT * FROM notifications WHERE issue_id = ?", issue.id)).toEqual([]);
  });
});

describe("people as assignees", () => {
  it("create and update with assigneeUserId notify the new assignee (not oneself), clearing the agent", async () => {
    const { owner, ada, grace, company, engineer } = await team();
    const created = await newIssue(owner.headers, company, { assigneeUserId: ada.userId });
    expect(created).toMatchObject({ assigneeUserId: ada.userId, assigneeAgentId: null, status: "todo" });
    expect((await inbox(ada)).body.items).toEqual([
      expect.objectContaining({ kind: "assigned", issue: expect.objectContaining({ id: created.id }) }),
    ]);
    const toAgent = await patchIssue(owner.headers, created.id, { assigneeAgentId: engineer.id });
    expect(toAgent.body).toMatchObject({ assigneeAgentId: engineer.id, assigneeUserId: null });
    const toGrace = await patchIssue(engineer.headers, created.id, { assigneeUserId: grace.userId });
    expect(toGrace.status).toBe(200);
    expect(toGrace.body).toMatchObject({ assigneeAgentId: null, assigneeUserId: grace.userId });
    expect((await inbox(grace)).body.items[0]?.actor).toEqual({
      type: "agent",
      id: engineer.id,
      name: engineer.name,
    });
    // Same assignee again, or assigning oneself: no notification.
    await patchIssue(owner.headers, created.id, { assigneeUserId: grace.userId, title: "Renamed" });
    await patchIssue(owner.headers, created.id, { assigneeUserId: owner.userId });
    expect(await unread(grace)).toBe(1);
    expect(await unread(owner)).toBe(0);
  });

  it("refuses a non-member or another tenant's user with 422, changing nothing; lists by assigneeUserId", async () => {
    const { owner, ada, company } = await team();
    const other = await boardUser();
    await seedCompany(other);
    const issue = await newIssue(owner.headers, company);
    for (const userId of [other.userId, crypto.randomUUID()]) {
      const onCreate = await call<ErrorBody>("POST", `/api/companies/${company.id}/issues`, {
        headers: owner.headers,
        body: { title: "X", assigneeUserId: userId },
      });
      expect(onCreate.status).toBe(422);
      expect(onCreate.body.error).toBe("assigneeUserId: no such board member in this company");
      const onUpdate = await patchIssue<ErrorBody>(owner.headers, issue.id, { assigneeUserId: userId });
      expect(onUpdate.status).toBe(422);
      expect(onUpdate.body.error).toBe("assigneeUserId: no such board member in this company");
    }
    expect(await rowsOf("SELECT * FROM notifications WHERE user_id = ?", other.userId)).toEqual([]);
    await patchIssue(owner.headers, issue.id, { assigneeUserId: ada.userId });
    const listed = await call<Array<{ id: string }>>(
      "GET",
      `/api/companies/${company.id}/issues?assigneeUserId=${ada.userId}`,
      { headers: owner.headers },
    );
    expect(listed.body.map((row) => row.id)).toEqual([issue.id]);
  });
});

describe("the notification inbox", () => {
  it("pages newest first, counts unread, marks one and all read; only the recipient sees them", async () => {
    const { owner, ada, grace, company } = await team();
    const issue = await newIssue(owner.headers, company);
    for (const n of [1, 2, 3]) await comment(owner, issue.id, `@Ada Lovelace number ${n}`);
    const all = await inbox(ada);
    expect(all.body.unreadCount).toBe(3);
    const first = await inbox(ada, "?limit=2");
    expect(first.body.items).toHaveLength(2);
    expect(first.body.nextBefore).toBe(first.body.items[1]?.id);
    const second = await inbox(ada, `?limit=2&before=${first.body.nextBefore}`);
    expect([...first.body.items, ...second.body.items].map((n) => n.id)).toEqual(
      all.body.items.map((n) => n.id),
    );
    expect(second.body.nextBefore).toBeNull();
    const commentIds = await rowsOf<{ id: string }>(
      "SELECT id FROM issue_comments WHERE issue_id = ? ORDER BY created_at DESC, rowid DESC",
      issue.id,
    );
    expect(all.body.items.map((n) => n.commentId)).toEqual(commentIds.map((row) => row.id));

    const target = all.body.items[0]?.id ?? "";
    expect((await call("POST", `/api/notifications/${target}/read`, { headers: grace.headers })).status).toBe(
      404,
    );
    expect(
      (await call("GET", `/api/notifications?before=${target}`, { headers: grace.headers })).status,
    ).toBe(400);
    const marked = await call<{ id: string; readAt: string }>("POST", `/api/notifications/${target}/read`, {
      headers: ada.headers,
    });
    expect(marked.status).toBe(200);
    expect(marked.body.readAt).toEqual(expect.any(String));
    expect(await unread(ada)).toBe(2);
    expect((await inbox(ada, "?unread=true")).body.items.map((n) => n.id)).not.toContain(target);
    const allRead = await call<{ marked: number }>("POST", "/api/notifications/read-all", {
      headers: ada.headers,
    });
    expect(allRead.body).toEqual({ marked: 2, unreadCount: 0 });
    expect(await unread(ada)).toBe(0);
    expect((await inbox(grace)).body.items).toEqual([]);
  });

  it("agents have no inbox (403); a removed member no longer sees that company's notifications", async () => {
    const { owner, ada, company, engineer } = await team();
    expect((await call("GET", "/api/notifications", { headers: engineer.headers })).status).toBe(403);
    const issue = await newIssue(owner.headers, company);
    await comment(owner, issue.id, "@Ada Lovelace look");
    expect(await unread(ada)).toBe(1);
    await env.DB.prepare("DELETE FROM company_memberships WHERE company_id = ? AND user_id = ?")
      .bind(company.id, ada.userId)
      .run();
    expect(await unread(ada)).toBe(0);
    expect((await inbox(ada)).body.items).toEqual([]);
  });

  it("a viewer is notified when mentioned and may mark it read", async () => {
    const { owner, company } = await team();
    const vic = await boardUser();
    await addMembership(company.id, vic.userId, "viewer");
    await rename(vic.userId, "Vic Viewer");
    const issue = await newIssue(owner.headers, company);
    await comment(owner, issue.id, "FYI @vic viewer");
    const [only] = (await inbox(vic)).body.items;
    expect(only?.kind).toBe("mention");
    const marked = await call("POST", `/api/notifications/${only?.id}/read`, { headers: vic.headers });
    expect(marked.status).toBe(200);
    expect(await unread(vic)).toBe(0);
  });

  it("announces a new notification on the company's live feed with the recipient's id only", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const bea = await signedInOwner();
    await addMembership(company.id, bea.userId, "member");
    await rename(bea.userId, "Bea Board");
    const board = await listen(`/api/companies/${company.id}/events`, bea.cookieHeaders);
    const issue = await newIssue(owner.headers, company);
    await comment(owner, issue.id, "@Bea Board your turn");
    expect(await board.next((f) => f.kind === "notification.created")).toEqual({
      type: "event",
      seq: expect.any(Number),
      at: expect.any(Number),
      kind: "notification.created",
      companyId: company.id,
      userId: bea.userId,
    });
    const notices = () => board.frames.filter((f) => f.kind === "notification.created");
    await patchIssue(owner.headers, issue.id, { assigneeUserId: bea.userId });
    await board.next(() => notices().length === 2);
    const created = await newIssue(owner.headers, company, { assigneeUserId: bea.userId });
    expect(created.assigneeUserId).toBe(bea.userId);
    await board.next(() => notices().length === 3);
    expect(JSON.stringify(notices())).not.toContain("your turn");
    board.socket.close(1000, "done");
  });
});
