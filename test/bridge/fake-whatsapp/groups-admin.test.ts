/**
 * Group administration on real Baileys against the fake WhatsApp: each operation the edge asks for
 * (`wa` commands: group.create, group.participants, group.subject, …) goes through the bridge's
 * operation path to the fake's `w:g2` answers, and the test checks what the fake's registry then holds
 * and what another member's WhatsApp Web (a second real Baileys companion) is told. The other way,
 * changes other members make (`w:gp2` notifications) arrive at the edge as group events.
 */
import type { BaileysEventMap } from "@whiskeysockets/baileys";
import { afterEach, describe, expect, it } from "vitest";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import type { FakeGroup } from "../../fake-whatsapp/group-registry.ts";
import { FakePhone } from "../../fake-whatsapp/phone.ts";
import type { FakeWhatsApp } from "../../fake-whatsapp/server.ts";
import type { FakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";
import { connectBaileys, memoryAuth } from "./baileys-client.ts";
import { linkedBridge, restartBridge, storedEvents } from "./linked-bridge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const PHONE = "4915550007100";
const ME = `${PHONE}@s.whatsapp.net`;
const NOBODY = "4915550009876@s.whatsapp.net";

/** Another member's WhatsApp Web: a real Baileys companion of its own account, and what it was told. */
async function memberCompanion(whatsapp: FakeWhatsApp, number: string) {
  const phone = new FakePhone(whatsapp, number);
  const auth = memoryAuth();
  const pairing = connectBaileys(whatsapp.url, auth);
  cleanup.push(async () => pairing.sock.end(undefined));
  await phone.scan(await waitFor(() => pairing.qrs[0], "the member's QR", 10_000));
  await waitFor(() => pairing.closeCode, "the member's restart after pairing", 10_000);
  const client = connectBaileys(whatsapp.url, auth);
  cleanup.push(async () => client.sock.end(undefined));
  await waitFor(() => client.states.includes("open"), "the member's companion open", 10_000);
  const seen = {
    participants: [] as BaileysEventMap["group-participants.update"][],
    upserts: [] as BaileysEventMap["groups.upsert"],
    updates: [] as BaileysEventMap["groups.update"],
  };
  client.sock.ev.on("group-participants.update", (update) => seen.participants.push(update));
  client.sock.ev.on("groups.upsert", (groups) => seen.upserts.push(...groups));
  client.sock.ev.on("groups.update", (updates) => seen.updates.push(...updates));
  return { phone, seen };
}

async function wa(edge: FakeEdge, args: Record<string, string | number | string[]>) {
  return edge.command("g", "wa", args);
}

const registryGroup = (whatsapp: FakeWhatsApp, jid: string): FakeGroup => {
  const group = whatsapp.messaging.groups.get(jid);
  if (!group) throw new Error(`the fake has no group ${jid}`);
  return group;
};
const phoneLid = (whatsapp: FakeWhatsApp) => whatsapp.messaging.directory.account(PHONE)?.lidUser;
const memberNumbers = (group: FakeGroup) => group.members.map((member) => member.pnUser);
const adminNumbers = (group: FakeGroup) =>
  [...group.admins].map(([member, role]) => `${member.pnUser}:${role}`).sort();

describe("group administration through the bridge, against the fake WhatsApp", () => {
  it("create, add/promote/demote/remove (a status per participant), subject, description, settings, timer, invite, join, leave: the fake's registry changes and another member's companion is told", async () => {
    const { whatsapp, edge } = await linkedBridge(cleanup, { session: "g", phoneNumber: PHONE });
    const alice = new FakeContact(whatsapp, "4915550007201", "Alice");
    const bob = new FakeContact(whatsapp, "4915550007202", "Bob");
    const member = await memberCompanion(whatsapp, "4915550007203");

    const created = await wa(edge, {
      op: "group.create",
      subject: "Team",
      participants: [alice.jid, member.phone.jid],
    });
    expect(created).toMatchObject({ ok: true, data: { subject: "Team", owner: ME } });
    const info = created.data as { jid: string; participants: Array<{ id: string; admin: string | null }> };
    expect(info.participants).toEqual(
      expect.arrayContaining([
        { id: ME, admin: "superadmin" },
        { id: alice.jid, admin: null },
        { id: member.phone.jid, admin: null },
      ]),
    );
    const group = registryGroup(whatsapp, info.jid);
    expect(memberNumbers(group)).toEqual([PHONE, alice.phoneNumber, member.phone.phoneNumber]);
    expect(adminNumbers(group)).toEqual([`${PHONE}:superadmin`]);
    const told = await waitFor(
      () => member.seen.upserts.find((upsert) => upsert.id === info.jid),
      "the member told of the new group",
      10_000,
    );
    expect(told).toMatchObject({ subject: "Team", ownerPn: ME });

    const added = await wa(edge, {
      op: "group.participants",
      jid: info.jid,
      action: "add",
      participants: [bob.jid, alice.jid, NOBODY],
    });
    // Answered by number, as asked, though WhatsApp names members of a LID group by LID.
    expect(added).toMatchObject({
      ok: true,
      data: [
        { jid: bob.jid, status: "200" },
        { jid: alice.jid, status: "409" },
        { jid: NOBODY, status: "404" },
      ],
    });
    expect(memberNumbers(group)).toContain(bob.phoneNumber);
    const addSeen = await waitFor(
      () => member.seen.participants.find((update) => update.action === "add"),
      "the member told of the add",
      10_000,
    );
    expect(addSeen.participants.map((participant) => participant.phoneNumber)).toEqual([bob.jid]);
    // By LID: Baileys drops the notification's `participant_pn` (see bridge/src/whatsapp/group-addresses.ts).
    expect(addSeen.author).toBe(`${phoneLid(whatsapp)}@lid`);

    for (const action of ["promote", "demote"] as const) {
      const changed = await wa(edge, {
        op: "group.participants",
        jid: info.jid,
        action,
        participants: [bob.jid],
      });
      expect(changed).toMatchObject({ ok: true, data: [{ jid: bob.jid, status: "200" }] });
      expect(adminNumbers(group)).toEqual(
        action === "promote" ? [`${PHONE}:superadmin`, `${bob.phoneNumber}:admin`] : [`${PHONE}:superadmin`],
      );
    }
    const removed = await wa(edge, {
      op: "group.participants",
      jid: info.jid,
      action: "remove",
      participants: [alice.jid],
    });
    expect(removed).toMatchObject({ ok: true, data: [{ jid: alice.jid, status: "200" }] });
    expect(memberNumbers(group)).not.toContain(alice.phoneNumber);
    await waitFor(
      () =>
        ["promote", "demote", "remove"].every((a) => member.seen.participants.some((u) => u.action === a)),
      "the member told of promote, demote and remove",
      10_000,
    );

    expect(await wa(edge, { op: "group.subject", jid: info.jid, subject: "Team 2" })).toMatchObject({
      ok: true,
    });
    expect(group.subject).toBe("Team 2");
    expect(await wa(edge, { op: "group.description", jid: info.jid, description: "About us" })).toMatchObject(
      {
        ok: true,
      },
    );
    expect(group.description?.text).toBe("About us");
    // A second change names the first as `prev` (Baileys reads it from the metadata first).
    expect(await wa(edge, { op: "group.description", jid: info.jid, description: "" })).toMatchObject({
      ok: true,
    });
    expect(group.description).toBeUndefined();
    for (const setting of ["announcement", "locked"]) {
      expect(await wa(edge, { op: "group.setting", jid: info.jid, setting })).toMatchObject({ ok: true });
    }
    expect(group).toMatchObject({ announce: true, locked: true });
    expect(await wa(edge, { op: "group.ephemeral", jid: info.jid, expiration: 86_400 })).toMatchObject({
      ok: true,
    });
    expect(group.ephemeral).toBe(86_400);
    await waitFor(
      () =>
        member.seen.updates.some((update) => update.subject === "Team 2") &&
        member.seen.updates.some((update) => update.announce === true) &&
        member.seen.updates.some((update) => update.restrict === true),
      "the member told of the subject and settings",
      10_000,
    );

    const invite = await wa(edge, { op: "group.invite", jid: info.jid });
    expect(invite).toMatchObject({ ok: true, data: { code: group.inviteCode } });
    const revoked = await wa(edge, { op: "group.invite.revoke", jid: info.jid });
    const oldCode = (invite.data as { code: string }).code;
    expect(revoked).toMatchObject({ ok: true, data: { code: group.inviteCode } });
    expect(group.inviteCode).not.toBe(oldCode);

    // Someone else's group: joined by its code, but a plain member may not administer it.
    const dave = new FakeContact(whatsapp, "4915550007204", "Dave");
    const club = dave.createGroup("Club", [alice.account]);
    expect(await wa(edge, { op: "group.invite.accept", code: "NoSuchCode123" })).toMatchObject({
      ok: false,
      status: 400,
    });
    const joined = await wa(edge, { op: "group.invite.accept", code: club.inviteCode });
    expect(joined).toMatchObject({ ok: true, data: { jid: club.jid } });
    expect(memberNumbers(club)).toContain(PHONE);
    const refused = await wa(edge, { op: "group.setting", jid: club.jid, setting: "announcement" });
    expect(refused).toMatchObject({ ok: false, status: 403 });
    expect(club.announce).toBe(false);
    // An admin now, but the group's creator is beyond an admin's reach: refused for that participant.
    dave.changeGroupMembers(club, "promote", [ME]);
    const creator = await wa(edge, {
      op: "group.participants",
      jid: club.jid,
      action: "remove",
      participants: [dave.jid],
    });
    expect(creator).toMatchObject({ ok: true, data: [{ jid: dave.jid, status: "403" }] });
    expect(memberNumbers(club)).toContain(dave.phoneNumber);
    expect(await wa(edge, { op: "group.leave", jid: club.jid })).toMatchObject({ ok: true });
    expect(memberNumbers(club)).not.toContain(PHONE);
    expect(await wa(edge, { op: "group.metadata", jid: club.jid })).toMatchObject({ ok: false, status: 404 });
    expect(edge.protocolErrors).toEqual([]);
  }, 90_000);
});

describe("group changes other members make, reaching the edge", () => {
  it("a group the account is put in (created, or added to an existing one), adds, promotions, removals, subject, settings, description and disappearing timer by another admin, a member leaving, an add while the bridge was away: stored as group events", async () => {
    const { whatsapp, edge, phone, bridge } = await linkedBridge(cleanup, {
      session: "g",
      phoneNumber: PHONE,
    });
    const dave = new FakeContact(whatsapp, "4915550007301", "Dave");
    const bob = new FakeContact(whatsapp, "4915550007302", "Bob");

    const group = dave.createGroup("Dave's", [phone.account]);
    const upsert = await waitFor(
      () =>
        storedEvents(edge, "g", "groups")
          .flatMap((event) => (event.action === "upsert" ? event.groups : []))
          .find((stored) => stored.jid === group.jid),
      "the new group stored",
      10_000,
    );
    expect(upsert).toMatchObject({
      subject: "Dave's",
      owner: dave.jid,
      participants: expect.arrayContaining([
        { id: dave.jid, admin: "superadmin" },
        { id: ME, admin: null },
      ]),
    });

    const participantsEvent = (action: string) =>
      waitFor(
        () =>
          storedEvents(edge, "g", "group.participants").find(
            (event) => event.jid === group.jid && event.action === action,
          ),
        `group.participants ${action}`,
        10_000,
      );
    dave.addToGroup(group, bob.account);
    expect(await participantsEvent("add")).toMatchObject({ participants: [bob.jid], author: dave.jid });
    dave.changeGroupMembers(group, "promote", [phone.account]);
    expect(await participantsEvent("promote")).toMatchObject({ participants: [ME], author: dave.jid });
    dave.removeFromGroup(group, bob.account);
    expect(await participantsEvent("remove")).toMatchObject({ participants: [bob.jid], author: dave.jid });

    dave.renameGroup(group, "Dave's place");
    dave.setGroupSetting(group, "announcement");
    dave.setGroupSetting(group, "locked");
    dave.describeGroup(group, "Fridays at eight");
    // Partial updates, or the group fetched whole (after a member change the bridge holds no list):
    // folded in order, as the edge stores them, they say what the group is now.
    const folded = () =>
      Object.assign(
        {},
        ...storedEvents(edge, "g", "groups")
          .flatMap((event) => event.groups)
          .filter((stored) => stored.jid === group.jid),
      ) as Record<string, unknown>;
    await waitFor(
      () =>
        folded().subject === "Dave's place" &&
        folded().announce === true &&
        folded().restrict === true &&
        folded().description === "Fridays at eight",
      "the subject, settings and description stored",
      10_000,
    );
    // With the group known again, the timer arrives on its own (an `ephemeral` notification).
    dave.setGroupTimer(group, 604_800);
    await waitFor(() => folded().ephemeral === 604_800, "the disappearing timer stored", 10_000);

    // Added to a group that already existed: WhatsApp says only `add`; the group is fetched whole.
    const erin = new FakeContact(whatsapp, "4915550007303", "Erin");
    const old = erin.createGroup("Old friends", [dave.account]);
    erin.addToGroup(old, phone.account);
    expect(
      await waitFor(
        () =>
          storedEvents(edge, "g", "group.participants").find(
            (event) => event.jid === old.jid && event.action === "add",
          ),
        "the add",
        10_000,
      ),
    ).toMatchObject({ participants: [ME], author: erin.jid });
    const fetched = await waitFor(
      () =>
        storedEvents(edge, "g", "groups")
          .flatMap((event) => (event.action === "upsert" ? event.groups : []))
          .find((stored) => stored.jid === old.jid),
      "the existing group stored whole",
      10_000,
    );
    expect(fetched).toMatchObject({ subject: "Old friends", owner: erin.jid });
    expect(fetched.participants?.map((participant) => participant.id).sort()).toEqual(
      [dave.jid, erin.jid, ME].sort(),
    );

    // Someone leaving is a `remove` naming themselves, by them.
    erin.leaveGroup(old);
    expect(
      await waitFor(
        () =>
          storedEvents(edge, "g", "group.participants").find(
            (event) => event.jid === old.jid && event.action === "remove",
          ),
        "the leave",
        10_000,
      ),
    ).toMatchObject({ participants: [erin.jid], author: erin.jid });

    // While the bridge is away WhatsApp keeps the notification for the device: it comes at the next
    // login (the groups fetched on connect would show the member, but not that someone added them).
    await bridge.fleet.shutdown();
    const carol = new FakeContact(whatsapp, "4915550007304", "Carol");
    dave.addToGroup(group, carol.account);
    await restartBridge(cleanup, { session: "g", edge, whatsapp }, { fleet: { shutdown: async () => {} } });
    expect(
      await waitFor(
        () =>
          storedEvents(edge, "g", "group.participants").find(
            (event) => event.jid === group.jid && event.participants.includes(carol.jid),
          ),
        "the add made while the bridge was away",
        15_000,
      ),
    ).toMatchObject({ action: "add", author: dave.jid });

    dave.removeFromGroup(group, phone.account);
    expect(await participantsEvent("remove")).toBeDefined();
    await waitFor(
      () =>
        storedEvents(edge, "g", "group.participants").some(
          (event) => event.jid === group.jid && event.action === "remove" && event.participants.includes(ME),
        ),
      "the account's own removal",
      10_000,
    );
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);
});
