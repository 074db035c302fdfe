/**
 * Messaging through the bridge's own session code on real Baileys, against the fake WhatsApp and a fake
 * edge: what the bridge reports to the edge when fake contacts write, what they decrypt when the edge
 * sends, and the delivered/read receipts as `message.status` (one-to-one by number and by LID, groups).
 */
import { createHash } from "node:crypto";
import sharp from "sharp";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import type { Json } from "../../../bridge/src/protocol/seam.ts";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import type { Received } from "../../fake-whatsapp/device.ts";
import { lidJid } from "../../fake-whatsapp/directory.ts";
import { sendRetryReceipt } from "../../fake-whatsapp/retry.ts";
import type { FakeWhatsApp } from "../../fake-whatsapp/server.ts";
import type { FakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";
import { linkedBridge as linkTo, restartBridge as restartTo, storedEvents } from "./linked-bridge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const SESSION = "m1";

const stored = <K extends SessionEvent["kind"]>(edge: FakeEdge, kind: K) => storedEvents(edge, SESSION, kind);

const statuses = (edge: FakeEdge) =>
  stored(edge, "message.status").map(({ id, chat, status }) => `${chat} ${id} ${status}`);

/** A bridge session linked to a fake phone's account by QR, connected; `media` adds the media host. */
const linkedBridge = ({ media = false } = {}) => linkTo(cleanup, { session: SESSION, media });

const restartBridge = (
  edge: FakeEdge,
  whatsapp: FakeWhatsApp,
  old: { fleet: { shutdown(): Promise<void> } },
) => restartTo(cleanup, { session: SESSION, edge, whatsapp }, old);

/**
 * The edge's `wa send` of a text; the bridge answers with the sent message, whose `raw` record the edge
 * keeps (as the real one does in its messages table) to answer resend requests after a restart.
 */
async function sendText(edge: FakeEdge, to: string, messageId: string, text: string): Promise<void> {
  const result = await edge.command(SESSION, "wa", {
    op: "send",
    to,
    messageId,
    content: { type: "text", text },
  });
  expect(result).toMatchObject({ ok: true, data: { id: messageId, chat: to, fromMe: true, status: "SENT" } });
  const raw = result.ok ? (result.data as { raw?: Json }).raw : undefined;
  if (raw !== undefined) edge.sent.set(`${SESSION}/${messageId}`, raw);
}

/**
 * Waits until the bridge reported the message itself (Baileys' `messages.upsert`). Baileys buffers
 * events and folds a receipt that comes before that flush into the message's own status; a receipt
 * after it is reported as a status change, which is what these tests look at.
 */
async function reported(edge: FakeEdge, id: string): Promise<void> {
  await waitFor(
    () => stored(edge, "message").some(({ message }) => message.id === id),
    `event ${id}`,
    10_000,
  );
}

async function firstReceived(contact: FakeContact, id: string): Promise<Received> {
  return waitFor(
    () => contact.inbox.find((message) => message.id === id),
    `${contact.name} got ${id}`,
    10_000,
  );
}

describe("messaging through the bridge on real Baileys against the fake WhatsApp", () => {
  it("a contact's text arrives as a live message event; the edge's send is decrypted by the contact, exactly", async () => {
    const { whatsapp, edge, device } = await linkedBridge();
    const alice = new FakeContact(whatsapp, "4915550001111", "Alice");

    const inbound = await alice.sendText(device, "hello bridge");
    const [event] = await waitFor(
      () => stored(edge, "message").length > 0 && stored(edge, "message"),
      "the message event",
      10_000,
    );
    expect(event).toMatchObject({
      live: true,
      message: {
        id: inbound.id,
        chat: alice.jid,
        sender: alice.jid,
        fromMe: false,
        pushName: "Alice",
        content: { type: "text", text: "hello bridge" },
      },
    });

    // Whether numbers are on WhatsApp: one usync query with the contact protocol.
    expect(
      await edge.command(SESSION, "wa", {
        op: "numbers.check",
        numbers: [alice.phoneNumber, "4915550000000"],
      }),
    ).toMatchObject({
      ok: true,
      data: [
        { number: alice.phoneNumber, exists: true, jid: alice.jid },
        { number: "4915550000000", exists: false, jid: null },
      ],
    });
    await sendText(edge, alice.jid, "OUT-TEXT-0001", "hello Alice, from the edge");
    const received = await firstReceived(alice, "OUT-TEXT-0001");
    expect(received.text).toBe("hello Alice, from the edge");
    expect(received.chat).toBe(alice.jid);
    expect(alice.device.failures).toEqual([]);

    // Alice answers on the session the bridge's reply established.
    const reply = await alice.sendText(device, "got it");
    expect(reply.type).toBe("msg");
    await waitFor(() => stored(edge, "message").length >= 3, "the reply event", 10_000);
    expect(stored(edge, "message").map(({ message }) => message.content)).toContainEqual({
      type: "text",
      text: "got it",
    });
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);

  it("delivered and read receipts become message.status for the stored message, whether from the contact's number or its LID", async () => {
    const { whatsapp, edge, device } = await linkedBridge();
    const bob = new FakeContact(whatsapp, "4915550002222", "Bob");
    // On a first connection Baileys holds events back until history sync (no phone sends one here:
    // see history.ts for one that does) or until it handles an incoming stanza: Bob writes first.
    await reported(edge, (await bob.sendText(device, "hi")).id);
    await sendText(edge, bob.jid, "OUT-RCPT-0001", "first");
    await sendText(edge, bob.jid, "OUT-RCPT-0002", "second");
    const first = await firstReceived(bob, "OUT-RCPT-0001");
    const second = await firstReceived(bob, "OUT-RCPT-0002");
    await reported(edge, "OUT-RCPT-0001");
    await reported(edge, "OUT-RCPT-0002");

    bob.sendReceipt(first, { via: "pn" });
    await waitFor(() => statuses(edge).length === 1, "the first status", 10_000);
    // WhatsApp now sends most receipts from the LID; the message is stored under the number.
    bob.sendReceipt(second, { via: "lid" });
    await waitFor(() => statuses(edge).length === 2, "the second status", 10_000);
    bob.sendReceipt(second, { via: "lid", type: "read" });
    await waitFor(() => statuses(edge).length === 3, "the read status", 10_000);
    expect(statuses(edge)).toEqual([
      `${bob.jid} OUT-RCPT-0001 DELIVERED`,
      `${bob.jid} OUT-RCPT-0002 DELIVERED`,
      `${bob.jid} OUT-RCPT-0002 READ`,
    ]);
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);

  it("groups: members' messages arrive as events; the edge's group send is decrypted by every member; their receipts become statuses", async () => {
    const { whatsapp, edge, phone } = await linkedBridge();
    const carol = new FakeContact(whatsapp, "4915550003333", "Carol");
    const dave = new FakeContact(whatsapp, "4915550004444", "Dave");
    const group = whatsapp.messaging.createGroup("Friends", carol.account, [dave.account, phone.account]);

    const inbound = await carol.sendGroupText(group, "hi all");
    await dave.sendGroupText(group, "hey");
    await waitFor(() => stored(edge, "message").length === 2, "both group messages", 10_000);
    expect(
      stored(edge, "message").map(({ message }) => [message.chat, message.sender, message.content]),
    ).toEqual([
      [group.jid, carol.jid, { type: "text", text: "hi all" }],
      [group.jid, dave.jid, { type: "text", text: "hey" }],
    ]);
    expect(stored(edge, "message")[0]?.message.id).toBe(inbound.id);

    await sendText(edge, group.jid, "OUT-GROUP-001", "hello group");
    for (const member of [carol, dave]) {
      const received = await firstReceived(member, "OUT-GROUP-001");
      expect([received.chat, received.text]).toEqual([group.jid, "hello group"]);
      expect(member.device.failures).toEqual([]);
    }
    await waitFor(
      () => phone.device.inbox.some((message) => message.id === "OUT-GROUP-001"),
      "the phone's copy",
    );
    await reported(edge, "OUT-GROUP-001");
    // The member list is asked once; the next send reads it from the bridge's cache (cachedGroupMetadata).
    expect(whatsapp.messaging.groupQueries).toEqual([group.jid]);
    await sendText(edge, group.jid, "OUT-GROUP-002", "again");
    const again = await firstReceived(dave, "OUT-GROUP-002");
    expect([again.text, again.types]).toEqual(["again", ["skmsg"]]);
    expect(whatsapp.messaging.groupQueries).toEqual([group.jid]);

    const carols = await firstReceived(carol, "OUT-GROUP-001");
    // The account's own phone acknowledging its copy (`sender`, which Baileys reports as a read
    // timestamp) is no recipient's receipt; it comes first, so a wrong status would show first.
    whatsapp.deliver(carols.sender, {
      tag: "receipt",
      attrs: {
        id: "OUT-GROUP-001",
        from: group.jid,
        participant: lidJid(phone.account),
        type: "sender",
        t: String(Math.floor(Date.now() / 1000)),
      },
    });
    carol.sendReceipt(carols);
    await waitFor(() => statuses(edge).length === 1, "delivered", 10_000);
    dave.sendReceipt(await firstReceived(dave, "OUT-GROUP-001"), { type: "read" });
    await waitFor(() => statuses(edge).length === 2, "read", 10_000);
    expect(statuses(edge)).toEqual([
      `${group.jid} OUT-GROUP-001 DELIVERED`,
      `${group.jid} OUT-GROUP-001 READ`,
    ]);
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);

  it("an image the edge sends is uploaded to the media host (media_conn, HTTPS) and the contact decrypts message and file, byte for byte", async () => {
    const { whatsapp, edge, device } = await linkedBridge({ media: true });
    const erin = new FakeContact(whatsapp, "4915550005555", "Erin");
    await reported(edge, (await erin.sendText(device, "send me a picture")).id);
    const png = await sharp({ create: { width: 40, height: 20, channels: 4, background: "orange" } })
      .png()
      .toBuffer();
    edge.media.set(`${SESSION}/upload_0000001`, {
      bytes: png,
      mimetype: "image/png",
      fileName: "orange.png",
    });
    const result = await edge.command(SESSION, "wa", {
      op: "send",
      to: erin.jid,
      messageId: "OUT-IMAGE-001",
      content: { type: "image", media: { upload: "upload_0000001" }, caption: "orange" },
    });
    const sha256 = createHash("sha256").update(png).digest("hex");
    expect(result).toMatchObject({
      ok: true,
      data: { id: "OUT-IMAGE-001", content: { type: "image", caption: "orange", media: { sha256 } } },
    });

    const received = await firstReceived(erin, "OUT-IMAGE-001");
    const image = received.message.imageMessage;
    expect(image).toMatchObject({ caption: "orange", mimetype: "image/png" });
    const media = whatsapp.messaging.media;
    if (!image || !media) throw new Error("no image message");
    expect((await media.decryptMedia(image, "image")).equals(png)).toBe(true);
    expect(media.uploads).toEqual([expect.stringMatching(/^\/mms\/image\/[\w-]+ 200$/)]);
    expect(erin.device.failures).toEqual([]);
  }, 60_000);

  it("an image from a contact (encrypted, on the media host) arrives as a message event with its caption and the file's size and hash", async () => {
    const { whatsapp, edge, device } = await linkedBridge({ media: true });
    const frank = new FakeContact(whatsapp, "4915550006666", "Frank");
    const jpeg = await sharp({ create: { width: 32, height: 32, channels: 3, background: "blue" } })
      .jpeg()
      .toBuffer();
    const sent = await frank.sendImage(device, jpeg, "the sea");
    const [event] = await waitFor(
      () => stored(edge, "message").length > 0 && stored(edge, "message"),
      "the image event",
      10_000,
    );
    expect(event).toMatchObject({
      live: true,
      message: {
        id: sent.id,
        chat: frank.jid,
        content: {
          type: "image",
          caption: "the sea",
          media: {
            mimetype: "image/jpeg",
            size: jpeg.length,
            sha256: createHash("sha256").update(jpeg).digest("hex"),
          },
        },
      },
    });
  }, 60_000);

  it("after a bridge restart, a LID receipt still finds the message, a resend request is answered from the edge's record (from memory before), and the contact's session goes on", async () => {
    const { whatsapp, edge, device, bridge } = await linkedBridge();
    const grace = new FakeContact(whatsapp, "4915550007777", "Grace");
    await reported(edge, (await grace.sendText(device, "hi")).id);
    await sendText(edge, grace.jid, "OUT-RESTART-1", "before the restart");
    const received = await firstReceived(grace, "OUT-RESTART-1");
    await reported(edge, "OUT-RESTART-1");
    const copies = () => grace.inbox.filter((message) => message.id === "OUT-RESTART-1");
    const edgeAsked = () => edge.mediaRequests.filter((request) => request.startsWith("GET sent"));

    // Grace lost the message and asks again: the bridge still has it in memory (RecentSent).
    sendRetryReceipt(whatsapp, device, grace, "OUT-RESTART-1");
    await waitFor(() => copies().length === 2, "the resend from memory", 10_000);
    expect(copies()[1]?.text).toBe("before the restart");
    expect(edgeAsked()).toEqual([]);

    await restartBridge(edge, whatsapp, bridge);
    expect(whatsapp.logins).toEqual([device.jid, device.jid]);
    // The new process has only what the edge stored: the LID mapping Baileys learnt before the restart.
    grace.sendReceipt(received, { via: "lid", type: "read" });
    await waitFor(() => statuses(edge).length === 1, "the read status", 10_000);
    expect(statuses(edge)).toEqual([`${grace.jid} OUT-RESTART-1 READ`]);

    // …and the message itself: a resend request now is answered from the edge's record of it.
    sendRetryReceipt(whatsapp, device, grace, "OUT-RESTART-1");
    await waitFor(() => copies().length === 3, "the resend after the restart", 10_000);
    expect(copies()[2]?.text).toBe("before the restart");
    expect(edgeAsked()).toEqual([`GET sent ${SESSION}/OUT-RESTART-1 200`]);
    expect(grace.device.failures).toEqual([]);

    const after = await grace.sendText(device, "still there?");
    expect(after.type).toBe("msg");
    await reported(edge, after.id);
    expect(stored(edge, "message").at(-1)?.message.content).toEqual({ type: "text", text: "still there?" });
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);
});
