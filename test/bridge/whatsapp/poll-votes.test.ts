/**
 * The poll record a vote is decrypted with (poll-votes.ts), from the message as Baileys holds it and
 * from the edge's JSON copy, where protobufjs wrote the secret as a base64 string (the pitfall that
 * makes a naive decrypt fail with "Unsupported state or unable to authenticate data").
 */
import { randomBytes } from "node:crypto";
import { generateWAMessageFromContent, proto } from "@whiskeysockets/baileys";
import { describe, expect, it } from "vitest";
import { fromJson, toJson, upsertEvent } from "../../../bridge/src/whatsapp/mapping.ts";
import { pollRecordOf } from "../../../bridge/src/whatsapp/poll-votes.ts";

const secret = randomBytes(32);
const poll = proto.Message.fromObject({
  messageContextInfo: { messageSecret: secret },
  pollCreationMessageV3: {
    name: "Hire?",
    options: [{ optionName: "Approve" }, { optionName: "Reject" }],
    selectableOptionsCount: 1,
  },
});

describe("a poll's record", () => {
  it("is the secret's bytes and the option names, from memory and from the edge's JSON copy alike", () => {
    const sent = generateWAMessageFromContent("4915550001111@s.whatsapp.net", poll, {
      userJid: "4915550009999@s.whatsapp.net",
    });
    const stored = fromJson(toJson(sent)) as { message?: unknown };
    expect(
      typeof (stored.message as { messageContextInfo: { messageSecret: unknown } }).messageContextInfo
        .messageSecret,
    ).toBe("string");
    for (const message of [sent.message, stored.message]) {
      const record = pollRecordOf(message);
      expect(Buffer.from(record?.secret ?? []).equals(secret)).toBe(true);
      expect(record?.options).toEqual(["Approve", "Reject"]);
    }
    expect(pollRecordOf({ conversation: "not a poll" })).toBeNull();
  });

  it("a vote is not a chat message (it becomes poll.vote elsewhere)", () => {
    const vote = generateWAMessageFromContent(
      "4915550001111@s.whatsapp.net",
      {
        pollUpdateMessage: {
          pollCreationMessageKey: { id: "POLL-1" },
          vote: { encPayload: randomBytes(20) },
        },
      },
      { userJid: "4915550009999@s.whatsapp.net" },
    );
    expect(upsertEvent(vote, true, "4915550009999@s.whatsapp.net")).toBeNull();
  });
});
