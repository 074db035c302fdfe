/** The simulated WhatsApp's groups: membership, admin rights, invites, settings and their events. */
import { describe, expect, it } from "vitest";
import type { GroupInfo } from "../../../bridge/src/protocol/messaging.ts";
import { simulatorNetwork } from "../../../bridge/src/simulator/simulator.ts";
import { linkedAccount, list, person, record, refusal } from "../support/simulated-account.ts";

const P1 = person("491700000001");
const P2 = person("491700000002");
const UNKNOWN_GROUP = "120363999999999999@g.us";

async function world() {
  const network = simulatorNetwork();
  const a = await linkedAccount(network, "a", "491511111111", "Alice");
  const b = await linkedAccount(network, "b", "491522222222", "Bob");
  return { a, b };
}

describe("simulator: groups", () => {
  it("group.create makes the account superadmin, reports a groups upsert, and lists/reads it back", async () => {
    const { a } = await world();
    const info = record(
      (await a.perform({ op: "group.create", subject: "Team", participants: [P1, P2] })).data,
    );
    expect(info).toEqual({
      jid: expect.stringMatching(/^120363\d{12}@g\.us$/),
      subject: "Team",
      description: null,
      owner: a.me,
      creation: expect.any(Number),
      announce: false,
      restrict: false,
      ephemeral: 0,
      isCommunity: false,
      linkedParentJid: null,
      participants: [
        { id: a.me, admin: "superadmin" },
        { id: P1, admin: null },
        { id: P2, admin: null },
      ],
    });
    expect(a.seen("groups")).toEqual([{ kind: "groups", action: "upsert", groups: [info] }]);
    const jid = String(info.jid);
    expect((await a.perform({ op: "group.metadata", jid })).data).toEqual(info);
    expect((await a.perform({ op: "group.list" })).data).toEqual([info]);
    expect(await refusal(a.perform({ op: "group.metadata", jid: UNKNOWN_GROUP }))).toEqual({
      status: 404,
      message: "group not found",
    });
    expect(
      await refusal(
        a.perform({
          op: "send",
          to: UNKNOWN_GROUP,
          messageId: "GROUPMSG1",
          content: { type: "text", text: "x" },
        }),
      ),
    ).toMatchObject({
      status: 404,
    });
  });

  it("admins change subject, description, participants, settings and invites; members see the events", async () => {
    const { a, b } = await world();
    const jid = String(
      record((await a.perform({ op: "group.create", subject: "Team", participants: [b.me] })).data).jid,
    );
    await a.perform({ op: "group.subject", jid, subject: "Team 2" });
    await a.perform({ op: "group.description", jid, description: "about" });
    const added = await a.perform({ op: "group.participants", jid, action: "add", participants: [P1, b.me] });
    expect(added.data).toEqual([
      { jid: P1, status: "200" },
      { jid: b.me, status: "409" },
    ]);
    expect(
      (await a.perform({ op: "group.participants", jid, action: "promote", participants: [b.me] })).data,
    ).toEqual([{ jid: b.me, status: "200" }]);
    await a.perform({ op: "group.setting", jid, setting: "announcement" });
    await a.perform({ op: "group.setting", jid, setting: "locked" });
    await a.perform({ op: "group.ephemeral", jid, expiration: 86_400 });

    const expected = [
      { kind: "groups", action: "upsert", groups: [expect.objectContaining({ jid, subject: "Team" })] },
      { kind: "groups", action: "update", groups: [{ jid, subject: "Team 2" }] },
      { kind: "groups", action: "update", groups: [{ jid, description: "about" }] },
      { kind: "group.participants", jid, action: "add", participants: [P1], author: a.me },
      { kind: "group.participants", jid, action: "promote", participants: [b.me], author: a.me },
      { kind: "groups", action: "update", groups: [{ jid, announce: true }] },
      { kind: "groups", action: "update", groups: [{ jid, restrict: true }] },
      { kind: "groups", action: "update", groups: [{ jid, ephemeral: 86_400 }] },
    ];
    expect(a.events).toEqual(expected);
    expect(b.events).toEqual(expected); // b is a simulated member: it sees the same
    const info = record((await b.perform({ op: "group.metadata", jid })).data);
    expect(info).toMatchObject({
      subject: "Team 2",
      description: "about",
      announce: true,
      restrict: true,
      ephemeral: 86_400,
    });
    expect(list(info.participants)).toContainEqual({ id: b.me, admin: "admin" });
  });

  it("non-admins get 403 'Bot must be admin'; announcement groups refuse their messages", async () => {
    const { a } = await world();
    const made = record(
      await a.control({
        action: "group.add",
        subject: "Their group",
        participants: [P1, P2],
        announce: true,
      }),
    );
    expect(made).toEqual({ jid: expect.stringMatching(/@g\.us$/), inviteCode: expect.any(String) });
    const jid = String(made.jid);
    const upsert = a.seen("groups")[0]?.groups[0] as GroupInfo;
    expect(upsert).toMatchObject({ jid, owner: P1, announce: true });
    expect(upsert.participants).toContainEqual({ id: a.me, admin: null });

    const forbidden = { status: 403, message: "Bot must be admin" };
    expect(
      await refusal(
        a.perform({ op: "group.participants", jid, action: "add", participants: [person("491700000009")] }),
      ),
    ).toEqual(forbidden);
    expect(await refusal(a.perform({ op: "group.setting", jid, setting: "not_announcement" }))).toEqual(
      forbidden,
    );
    expect(await refusal(a.perform({ op: "group.invite", jid }))).toEqual(forbidden);
    expect(
      await refusal(
        a.perform(
          { op: "picture.set", jid, source: { upload: "ref_12345678" } },
          { bytes: Buffer.from("x"), mimetype: "image/png" },
        ),
      ),
    ).toEqual(forbidden);
    expect(
      await refusal(
        a.perform({ op: "send", to: jid, messageId: "GROUPMSG1", content: { type: "text", text: "x" } }),
      ),
    ).toMatchObject({
      status: 403,
    });

    // A peer changes things: the account hears about it.
    await a.control({ action: "group.peer-update", jid, subject: "Renamed", announce: false });
    expect(a.seen("groups").at(-1)).toEqual({
      kind: "groups",
      action: "update",
      groups: [{ jid, subject: "Renamed", announce: false }],
    });
    const sent = await a.perform({
      op: "send",
      to: jid,
      messageId: "GROUPMSG2",
      content: { type: "text", text: "now I may" },
    });
    expect(record(sent.data)).toMatchObject({ chat: jid, sender: a.me, fromMe: true });
    expect(list(await a.control({ action: "inbox", peer: jid }))).toHaveLength(1);
  });

  it("invites: get, revoke (new code), accept (unknown code 400); joining and leaving are reported", async () => {
    const { a, b } = await world();
    const jid = String(
      record((await a.perform({ op: "group.create", subject: "Club", participants: [P1] })).data).jid,
    );
    const code = String(record((await a.perform({ op: "group.invite", jid })).data).code);
    const fresh = String(record((await a.perform({ op: "group.invite.revoke", jid })).data).code);
    expect(fresh).not.toBe(code);
    expect(await refusal(b.perform({ op: "group.invite.accept", code }))).toEqual({
      status: 400,
      message: "invalid or expired invite code",
    });
    expect((await b.perform({ op: "group.invite.accept", code: fresh })).data).toEqual({ jid });
    expect(b.seen("groups")).toEqual([
      { kind: "groups", action: "upsert", groups: [expect.objectContaining({ jid, subject: "Club" })] },
    ]);
    expect(a.seen("group.participants")).toEqual([
      { kind: "group.participants", jid, action: "add", participants: [b.me] },
    ]);

    // A message in the group reaches the other simulated member, as a group message.
    await a.perform({
      op: "send",
      to: jid,
      messageId: "GROUPMSG3",
      content: { type: "text", text: "welcome" },
    });
    expect(b.seen("message")[0]?.message).toMatchObject({
      id: "GROUPMSG3",
      chat: jid,
      sender: a.me,
      fromMe: false,
    });

    await b.perform({ op: "group.leave", jid });
    const left = { kind: "group.participants", jid, action: "remove", participants: [b.me], author: b.me };
    expect(a.seen("group.participants").at(-1)).toEqual(left);
    expect(b.seen("group.participants").at(-1)).toEqual(left);
    expect(await refusal(b.perform({ op: "group.metadata", jid }))).toMatchObject({ status: 404 });
    expect((await b.perform({ op: "group.list" })).data).toEqual([]);
  });

  it("removing members reports them too, and communities keep their fields", async () => {
    const { a, b } = await world();
    const parent = String(
      record(await a.control({ action: "group.add", subject: "Community", isCommunity: true })).jid,
    );
    const child = record(
      await a.control({
        action: "group.add",
        subject: "Sub",
        participants: [P1],
        linkedParentJid: parent,
        admin: true,
      }),
    );
    const jid = String(child.jid);
    const infos = list((await a.perform({ op: "group.list" })).data).map(record);
    expect(infos.find((info) => info.jid === parent)).toMatchObject({ isCommunity: true });
    expect(infos.find((info) => info.jid === jid)).toMatchObject({
      linkedParentJid: parent,
      isCommunity: false,
    });

    await a.perform({ op: "group.participants", jid, action: "add", participants: [b.me] });
    expect(b.seen("groups").at(-1)).toMatchObject({
      action: "upsert",
      groups: [expect.objectContaining({ jid })],
    });
    expect(
      (await a.perform({ op: "group.participants", jid, action: "remove", participants: [b.me, P2] })).data,
    ).toEqual([
      { jid: b.me, status: "200" },
      { jid: P2, status: "404" },
    ]);
    expect(b.seen("group.participants").at(-1)).toEqual({
      kind: "group.participants",
      jid,
      action: "remove",
      participants: [b.me],
      author: a.me,
    });
    const state = record(await a.control({ action: "state" }));
    expect(list(state.groups)).toHaveLength(2);
  });
});
