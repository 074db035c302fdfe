/**
 * Receipts beyond `messages.update`: group receipts per participant (`message-receipt.update`), and
 * receipts from a contact's LID moved to the phone number the message is stored under, in order.
 */
import { describe, expect, it } from "vitest";
import type { NetworkEvent } from "../../../bridge/src/protocol/messaging.ts";
import {
  inOrderWithPhoneNumbers,
  receiptEvents,
  withPhoneNumberChats,
} from "../../../bridge/src/whatsapp/receipts.ts";
import { networkEvents } from "../../../bridge/src/whatsapp/whatsapp.ts";

const GROUP = "120363000000000001@g.us";
const PEER = "491700000001@s.whatsapp.net";
const PEER_LID = "81234567890123@lid";
const status = (id: string, chat: string, value: "DELIVERED" | "READ"): NetworkEvent => ({
  kind: "message.status",
  id,
  chat,
  status: value,
});

describe("receipts", () => {
  it("a participant's receipt moves our group message to DELIVERED or READ; others' messages and empty receipts are not statuses", () => {
    const participant = PEER_LID;
    expect(
      receiptEvents([
        {
          key: { remoteJid: GROUP, id: "G1", fromMe: true },
          receipt: { userJid: participant, receiptTimestamp: 5 },
        },
        {
          key: { remoteJid: GROUP, id: "G2", fromMe: true },
          receipt: { userJid: participant, receiptTimestamp: 5, readTimestamp: 6 },
        },
        {
          key: { remoteJid: GROUP, id: "G3", fromMe: true },
          receipt: { userJid: participant, playedTimestamp: 7 },
        },
        {
          key: { remoteJid: GROUP, id: "G4", fromMe: false },
          receipt: { userJid: participant, readTimestamp: 7 },
        },
        { key: { remoteJid: GROUP, id: "G5", fromMe: true }, receipt: { userJid: participant } },
      ]),
    ).toEqual([status("G1", GROUP, "DELIVERED"), status("G2", GROUP, "READ"), status("G3", GROUP, "READ")]);
    // The account's own devices' receipts (by number or LID) are not a recipient's.
    expect(
      receiptEvents(
        [
          {
            key: { remoteJid: GROUP, id: "G6", fromMe: true },
            receipt: { userJid: "491511111111@s.whatsapp.net", readTimestamp: 8 },
          },
          {
            key: { remoteJid: GROUP, id: "G7", fromMe: true },
            receipt: { userJid: "70000000000001@lid", readTimestamp: 8 },
          },
        ],
        ["491511111111:7@s.whatsapp.net", "70000000000001:7@lid"],
      ),
    ).toEqual([]);
    // networkEvents reads the event at all (it used to be ignored).
    expect(
      networkEvents(
        {
          "message-receipt.update": [
            { key: { remoteJid: GROUP, id: "G1", fromMe: true }, receipt: { readTimestamp: 9 } },
          ],
        },
        "491511111111:7@s.whatsapp.net",
      ),
    ).toEqual([status("G1", GROUP, "READ")]);
  });

  it("a LID chat becomes the phone number when the mapping is known; unknown LIDs and other events pass as they are", async () => {
    const phoneNumberOf = async (lid: string) => (lid === PEER_LID ? "491700000001:0@s.whatsapp.net" : null);
    const message: NetworkEvent = { kind: "message.deleted", id: "D1", chat: PEER_LID, fromMe: false };
    expect(
      await withPhoneNumberChats(
        [
          status("S1", PEER_LID, "READ"),
          status("S2", "99999999999999@lid", "READ"),
          status("S3", PEER, "READ"),
          message,
        ],
        phoneNumberOf,
      ),
    ).toEqual([
      status("S1", PEER, "READ"),
      status("S2", "99999999999999@lid", "READ"),
      status("S3", PEER, "READ"),
      message,
    ]);
    const failing = async () => {
      throw new Error("store down");
    };
    expect(await withPhoneNumberChats([status("S1", PEER_LID, "READ")], failing)).toEqual([
      status("S1", PEER_LID, "READ"),
    ]);
  });

  it("batches keep their order while a LID lookup is pending; without one they go out at once", async () => {
    let release: (pn: string) => void = () => {};
    const lookup = new Promise<string>((resolve) => {
      release = resolve;
    });
    const emitted: string[] = [];
    const deliver = inOrderWithPhoneNumbers(
      () => lookup,
      (event) =>
        emitted.push("id" in event ? `${event.id} ${"chat" in event ? event.chat : ""}` : event.kind),
    );
    deliver([status("A", PEER, "DELIVERED")]);
    expect(emitted).toEqual([`A ${PEER}`]);
    deliver([status("B", PEER_LID, "READ")]);
    deliver([status("C", PEER, "READ")]);
    expect(emitted).toEqual([`A ${PEER}`]);
    release(PEER);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(emitted).toEqual([`A ${PEER}`, `B ${PEER}`, `C ${PEER}`]);
    deliver([status("D", PEER, "READ")]);
    expect(emitted.at(-1)).toBe(`D ${PEER}`);
  });
});
