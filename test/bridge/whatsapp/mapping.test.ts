/**
 * Baileys to our wire shapes, on hand-built Baileys objects (no socket): message content, addressing
 * (phone numbers over LIDs), protocol messages, receipts, groups, contacts, calls and error statuses.
 */
import { proto, type WAMessage } from "@whiskeysockets/baileys";
import { describe, expect, it } from "vitest";
import { statusFromAck } from "../../../bridge/src/protocol/messaging.ts";
import { OperationError } from "../../../bridge/src/protocol/seam.ts";
import {
  contactInfo,
  fromJson,
  groupInfo,
  operationError,
  statusEvents,
  upsertEvent,
  wireContent,
  wireMessage,
} from "../../../bridge/src/whatsapp/mapping.ts";
import { networkEvents } from "../../../bridge/src/whatsapp/whatsapp.ts";

const ME = "491511111111:7@s.whatsapp.net";
const PEER = "491700000001@s.whatsapp.net";
const GROUP = "120363000000000001@g.us";
const { Type } = proto.Message.ProtocolMessage;

function incoming(message: proto.IMessage, overrides: Partial<WAMessage> = {}): WAMessage {
  return {
    key: { remoteJid: PEER, fromMe: false, id: "MSG1" },
    message,
    messageTimestamp: 1_700_000_000,
    pushName: "Peer",
    ...overrides,
  };
}

describe("whatsapp-mapping: content", () => {
  it("maps every modelled message type", () => {
    const sha = new Uint8Array([0xab, 0xcd]);
    expect(wireContent({ conversation: "hi" })).toEqual({ type: "text", text: "hi" });
    expect(
      wireContent({
        extendedTextMessage: { text: "@a @b", contextInfo: { mentionedJid: [PEER, "1234@lid"] } },
      }),
    ).toEqual({ type: "text", text: "@a @b", mentions: [PEER] });
    expect(
      wireContent({
        imageMessage: { mimetype: "image/jpeg", fileLength: 42, fileSha256: sha, caption: "cap" },
      }),
    ).toEqual({ type: "image", caption: "cap", media: { mimetype: "image/jpeg", size: 42, sha256: "abcd" } });
    expect(wireContent({ videoMessage: { mimetype: "video/mp4", seconds: 9 } })).toEqual({
      type: "video",
      media: { mimetype: "video/mp4", seconds: 9 },
    });
    expect(wireContent({ audioMessage: { mimetype: "audio/ogg; codecs=opus", ptt: true } })).toEqual({
      type: "audio",
      ptt: true,
      media: { mimetype: "audio/ogg; codecs=opus" },
    });
    // Documents with a caption come wrapped; the wrapper is looked through.
    expect(
      wireContent({
        documentWithCaptionMessage: {
          message: { documentMessage: { fileName: "a.pdf", mimetype: "application/pdf", caption: "read" } },
        },
      }),
    ).toEqual({
      type: "document",
      fileName: "a.pdf",
      mimetype: "application/pdf",
      caption: "read",
      media: { mimetype: "application/pdf", fileName: "a.pdf" },
    });
    expect(wireContent({ stickerMessage: { mimetype: "image/webp" } })).toEqual({
      type: "sticker",
      media: { mimetype: "image/webp" },
    });
    expect(
      wireContent({
        pollCreationMessageV3: {
          name: "Lunch?",
          options: [{ optionName: "Yes" }, { optionName: "No" }],
          selectableOptionsCount: 0,
        },
      }),
    ).toEqual({ type: "poll", question: "Lunch?", options: ["Yes", "No"], selectableCount: 2 });
    expect(
      wireContent({ locationMessage: { degreesLatitude: 52.5, degreesLongitude: 13.4, name: "Berlin" } }),
    ).toEqual({ type: "location", latitude: 52.5, longitude: 13.4, name: "Berlin" });
    expect(
      wireContent({
        contactsArrayMessage: { contacts: [{ displayName: "Ann", vcard: "BEGIN:VCARD\nEND:VCARD" }] },
      }),
    ).toEqual({ type: "contacts", contacts: [{ displayName: "Ann", vcard: "BEGIN:VCARD\nEND:VCARD" }] });
    expect(wireContent({ reactionMessage: { key: { id: "T1" }, text: "👍" } })).toEqual({
      type: "reaction",
      emoji: "👍",
      targetId: "T1",
    });
    expect(wireContent({ ephemeralMessage: { message: { conversation: "vanishing" } } })).toEqual({
      type: "text",
      text: "vanishing",
    });
  });

  it("reports what it does not model as unknown, and protocol chatter as nothing", () => {
    expect(wireContent({ buttonsMessage: { contentText: "pick" } })).toEqual({
      type: "unknown",
      description: "buttonsMessage",
    });
    // A one-option poll cannot be carried by our schema: reported, not dropped, not invalid.
    expect(wireContent({ pollCreationMessage: { name: "?", options: [{ optionName: "only" }] } })).toEqual({
      type: "unknown",
      description: "pollCreationMessage (not representable)",
    });
    expect(wireContent({ protocolMessage: { type: Type.HISTORY_SYNC_NOTIFICATION } })).toBeNull();
    expect(wireContent(null)).toBeNull();
  });
});

describe("whatsapp-mapping: messages and events", () => {
  it("a group message: phone-number JIDs over LIDs, ms timestamp, status, quote and the raw record", () => {
    const message = incoming(
      {
        extendedTextMessage: { text: "re", contextInfo: { stanzaId: "QUOTED1" } },
        messageContextInfo: { messageSecret: new Uint8Array([1, 2, 3]) },
      },
      {
        key: {
          remoteJid: GROUP,
          fromMe: false,
          id: "G1",
          participant: "123456789@lid",
          participantAlt: "491700000002:3@s.whatsapp.net",
        },
        status: proto.WebMessageInfo.Status.DELIVERY_ACK,
      },
    );
    const wire = wireMessage(message, ME);
    expect(wire).toMatchObject({
      id: "G1",
      chat: GROUP,
      sender: "491700000002@s.whatsapp.net",
      fromMe: false,
      pushName: "Peer",
      timestamp: 1_700_000_000_000,
      content: { type: "text", text: "re" },
      quotedId: "QUOTED1",
      status: "DELIVERED",
    });
    // The raw record survives the trip through JSON, Buffers included, so it can be quoted later.
    const revived = fromJson(wire?.raw ?? null) as WAMessage;
    expect(Buffer.isBuffer(revived.message?.messageContextInfo?.messageSecret)).toBe(true);
    expect(revived.key.id).toBe("G1");
  });

  it("own messages are from this account (device suffix dropped); LID chats use the known phone JID", () => {
    const own = wireMessage(
      incoming(
        { conversation: "mine" },
        { key: { remoteJid: "55555@lid", remoteJidAlt: PEER, fromMe: true, id: "O1" } },
      ),
      ME,
    );
    expect(own).toMatchObject({ chat: PEER, sender: "491511111111@s.whatsapp.net", fromMe: true });
  });

  it("protocol messages become edits and deletes; other upserts become live or stored messages", () => {
    const revoke = incoming({ protocolMessage: { type: Type.REVOKE, key: { id: "OLD1" } } });
    expect(upsertEvent(revoke, true, ME)).toEqual({
      kind: "message.deleted",
      id: "OLD1",
      chat: PEER,
      fromMe: false,
    });
    const edit = incoming({
      editedMessage: {
        message: {
          protocolMessage: {
            type: Type.MESSAGE_EDIT,
            key: { id: "OLD2" },
            editedMessage: { conversation: "fixed" },
          },
        },
      },
    });
    expect(upsertEvent(edit, true, ME)).toEqual({
      kind: "message.edited",
      id: "OLD2",
      chat: PEER,
      fromMe: false,
      text: "fixed",
    });
    expect(upsertEvent(incoming({ protocolMessage: { type: Type.EPHEMERAL_SETTING } }), true, ME)).toBeNull();
    expect(upsertEvent(incoming({ conversation: "x" }), false, ME)).toMatchObject({
      kind: "message",
      live: false,
    });
    expect(upsertEvent(incoming({}), true, ME)).toBeNull(); // a stub without content
  });

  it("maps every WhatsApp ack to our status (WA-AKG is off by one here)", () => {
    const { Status } = proto.WebMessageInfo;
    const table: [number, string][] = [
      [Status.ERROR, "FAILED"],
      [Status.PENDING, "PENDING"],
      [Status.SERVER_ACK, "SENT"],
      [Status.DELIVERY_ACK, "DELIVERED"],
      [Status.READ, "READ"],
      [Status.PLAYED, "READ"],
    ];
    const updates = table.map(([status], i) => ({
      key: { remoteJid: PEER, id: `A${i}`, fromMe: true },
      update: { status },
    }));
    expect(statusEvents(updates, ME).map((event) => "status" in event && event.status)).toEqual(
      table.map(([, ours]) => ours),
    );
    expect(statusFromAck(99)).toBeNull();
  });

  it("receipts from messages.update; groups, participants (objects in v7), contacts and calls", () => {
    expect(
      statusEvents(
        [
          {
            key: { remoteJid: PEER, id: "S1", fromMe: true },
            update: { status: proto.WebMessageInfo.Status.READ },
          },
          { key: { remoteJid: PEER, id: "S2", fromMe: true }, update: { starred: true } },
        ],
        ME,
      ),
    ).toEqual([{ kind: "message.status", id: "S1", chat: PEER, status: "READ" }]);

    const events = networkEvents(
      {
        "messages.upsert": {
          type: "notify",
          messages: [
            incoming({ conversation: "one" }),
            incoming({ conversation: "two" }, { key: { remoteJid: PEER, id: "MSG2" } }),
          ],
        },
        "groups.upsert": [
          {
            id: GROUP,
            subject: "Team",
            owner: "1@lid",
            ownerPn: "491700000009@s.whatsapp.net",
            desc: "about",
            announce: true,
            linkedParent: "120363000000000002@g.us",
            participants: [
              { id: "77@lid", phoneNumber: "491700000003@s.whatsapp.net", admin: "admin" },
              { id: PEER },
            ],
          },
        ],
        "groups.update": [{ id: GROUP, subject: "Renamed" }, { subject: "no id" }],
        "group-participants.update": {
          id: GROUP,
          author: "1@lid",
          authorPn: "491700000009@s.whatsapp.net",
          action: "add",
          participants: [{ id: "88@lid", phoneNumber: "491700000004@s.whatsapp.net" }, { id: PEER }],
        },
        "contacts.upsert": [{ id: "99@lid", phoneNumber: PEER, notify: "Peer", imgUrl: "changed" }],
        call: [
          {
            chatId: PEER,
            from: PEER,
            id: "CALL1",
            date: new Date(),
            status: "offer",
            offline: false,
            isVideo: true,
          },
        ],
      },
      ME,
    );
    expect(events.map((event) => event.kind)).toEqual([
      "message",
      "message",
      "contacts",
      "groups",
      "groups",
      "group.participants",
      "call",
    ]);
    expect(events.filter((event) => event.kind === "message").every((event) => event.live)).toBe(true);
    expect(events[2]).toEqual({ kind: "contacts", contacts: [{ jid: PEER, lid: "99@lid", notify: "Peer" }] });
    expect(events[3]).toEqual({
      kind: "groups",
      action: "upsert",
      groups: [
        {
          jid: GROUP,
          subject: "Team",
          description: "about",
          owner: "491700000009@s.whatsapp.net",
          announce: true,
          linkedParentJid: "120363000000000002@g.us",
          participants: [
            { id: "491700000003@s.whatsapp.net", admin: "admin" },
            { id: PEER, admin: null },
          ],
        },
      ],
    });
    expect(events[4]).toEqual({
      kind: "groups",
      action: "update",
      groups: [{ jid: GROUP, subject: "Renamed" }],
    });
    expect(events[5]).toEqual({
      kind: "group.participants",
      jid: GROUP,
      action: "add",
      participants: ["491700000004@s.whatsapp.net", PEER],
      author: "491700000009@s.whatsapp.net",
    });
    expect(events[6]).toEqual({
      kind: "call",
      id: "CALL1",
      from: PEER,
      status: "offer",
      isVideo: true,
      caller: PEER,
      timestamp: expect.any(Number),
    });
  });

  it("partial group updates carry only what changed; contacts keep names and real picture URLs", () => {
    expect(groupInfo({ id: GROUP, desc: undefined })).toEqual({ jid: GROUP, description: null });
    expect(contactInfo({ id: PEER, name: "Saved", imgUrl: "https://pps.example/x.jpg" })).toEqual({
      jid: PEER,
      name: "Saved",
      imgUrl: "https://pps.example/x.jpg",
    });
    expect(contactInfo({ id: PEER, imgUrl: null })).toEqual({ jid: PEER, imgUrl: null });
    expect(contactInfo({ notify: "no id" })).toBeNull();
  });
});

describe("whatsapp-mapping: errors", () => {
  it("maps WhatsApp's IQ errors to statuses and a closed connection to 503", () => {
    const iq = (text: string, code: number) => Object.assign(new Error(text), { data: code });
    const statusOf = (error: unknown) => {
      const mapped = operationError(error);
      return mapped instanceof OperationError ? [mapped.status, mapped.message] : ["plain", mapped.message];
    };
    expect(statusOf(iq("not-authorized", 401))).toEqual([403, "not-authorized"]);
    expect(statusOf(iq("forbidden", 403))).toEqual([403, "forbidden"]);
    expect(statusOf(iq("item-not-found", 404))).toEqual([404, "item-not-found"]);
    expect(statusOf(iq("bad-request", 400))).toEqual([400, "bad-request"]);
    expect(statusOf(Object.assign(new Error("Connection Closed"), { output: { statusCode: 428 } }))).toEqual([
      503,
      "WhatsApp is not connected",
    ]);
    expect(statusOf(new Error("something else"))).toEqual(["plain", "something else"]);
    expect(statusOf("a string")).toEqual(["plain", "a string"]);
  });
});
