/**
 * Poll votes through the bridge on real Baileys against the fake WhatsApp: the edge sends a poll, a fake
 * contact's phone votes (encrypted as WhatsApp does), and the edge gets `poll.vote` with the voter's
 * number and the option names; after a restart the vote is decrypted from the edge's record of the poll.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import type { Json } from "../../../bridge/src/protocol/seam.ts";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import type { Received } from "../../fake-whatsapp/device.ts";
import type { FakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";
import { linkedBridge, restartBridge, storedEvents } from "./linked-bridge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const SESSION = "pv1";
const OPTIONS = ["Approve", "Reject", "Ask for changes"];

const stored = <K extends SessionEvent["kind"]>(edge: FakeEdge, kind: K) => storedEvents(edge, SESSION, kind);
const votes = (edge: FakeEdge) => stored(edge, "poll.vote").map(({ vote }) => vote);

/** The edge's `wa send` of a poll; like the real edge, it keeps the sent message's record (`raw`). */
async function sendPoll(
  edge: FakeEdge,
  to: string,
  messageId: string,
  { selectableCount = 1, keep = true } = {},
): Promise<void> {
  const result = await edge.command(SESSION, "wa", {
    op: "send",
    to,
    messageId,
    content: { type: "poll", question: "Hire a designer?", options: OPTIONS, selectableCount },
  });
  expect(result).toMatchObject({ ok: true, data: { id: messageId, content: { type: "poll" } } });
  const raw = result.ok ? (result.data as { raw?: Json }).raw : undefined;
  if (raw !== undefined && keep) edge.sent.set(`${SESSION}/${messageId}`, raw);
}

const received = (contact: FakeContact, id: string): Promise<Received> =>
  waitFor(() => contact.inbox.find((message) => message.id === id), `${contact.name} got ${id}`, 10_000);

describe("poll votes through the bridge on real Baileys against the fake WhatsApp", () => {
  it("a contact's vote, changed vote and un-vote reach the edge as poll.vote with the voter's number and the option names", async () => {
    const { whatsapp, edge, device } = await linkedBridge(cleanup, { session: SESSION });
    const alice = new FakeContact(whatsapp, "4915550001111", "Alice");
    // Baileys holds events back on a first connection until it handles an incoming stanza.
    await alice.sendText(device, "hello");
    await waitFor(() => stored(edge, "message").length > 0, "the first message", 10_000);

    await sendPoll(edge, alice.jid, "POLL-0001");
    const poll = await received(alice, "POLL-0001");
    expect(poll.message.pollCreationMessageV3?.options?.map((option) => option.optionName)).toEqual(OPTIONS);

    const first = await alice.sendPollVote(device, poll, ["Ask for changes"]);
    await waitFor(() => votes(edge).length === 1, "the vote", 10_000);
    expect(votes(edge)[0]).toMatchObject({
      id: first.id,
      chat: alice.jid,
      pollId: "POLL-0001",
      voter: alice.jid,
      voterPhone: "4915550001111",
      selectedOptions: ["Ask for changes"],
    });

    const changed = await alice.sendPollVote(device, poll, ["Approve"]);
    const withdrawn = await alice.sendPollVote(device, poll, []);
    await waitFor(() => votes(edge).length === 3, "the changed vote and the un-vote", 10_000);
    expect(votes(edge).map(({ id, selectedOptions }) => [id, selectedOptions])).toEqual([
      [first.id, ["Ask for changes"]],
      [changed.id, ["Approve"]],
      [withdrawn.id, []],
    ]);
    // A vote is not a chat message: nothing but the contact's hello and the poll are messages.
    expect(stored(edge, "message").map(({ message }) => message.id)).not.toContain(first.id);
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);

  it("after a bridge restart a vote is decrypted from the edge's record of the poll, whichever JID forms the phone used", async () => {
    const { whatsapp, edge, device, bridge } = await linkedBridge(cleanup, { session: SESSION });
    const bob = new FakeContact(whatsapp, "4915550002222", "Bob");
    await bob.sendText(device, "hi");
    await waitFor(() => stored(edge, "message").length > 0, "the first message", 10_000);
    await sendPoll(edge, bob.jid, "POLL-0002", { selectableCount: 2 });
    const poll = await received(bob, "POLL-0002");
    // A poll whose record the edge lost: its votes cannot be read after the restart.
    await sendPoll(edge, bob.jid, "POLL-LOST", { keep: false });
    const lost = await received(bob, "POLL-LOST");

    await restartBridge(cleanup, { session: SESSION, edge, whatsapp }, bridge);
    await bob.sendPollVote(device, lost, ["Approve"]);
    await bob.sendPollVote(device, poll, ["Approve", "Reject"]);
    await waitFor(() => votes(edge).length === 1, "the vote after the restart", 15_000);
    expect(votes(edge)[0]).toMatchObject({
      pollId: "POLL-0002",
      voter: bob.jid,
      voterPhone: "4915550002222",
      selectedOptions: ["Approve", "Reject"],
    });
    expect(edge.mediaRequests).toContain(`GET sent ${SESSION}/POLL-0002 200`);
    // The unreadable vote was looked up, reported nowhere, and the session went on.
    expect(edge.mediaRequests).toContain(`GET sent ${SESSION}/POLL-LOST 404`);
    expect(votes(edge).map(({ pollId }) => pollId)).toEqual(["POLL-0002"]);

    // Another phone may hash the account's number and its own LID instead.
    await bob.sendPollVote(device, poll, ["Reject"], { creator: "pn", voter: "lid" });
    await waitFor(() => votes(edge).length === 2, "the vote in other JID forms", 10_000);
    expect(votes(edge)[1]).toMatchObject({ voterPhone: "4915550002222", selectedOptions: ["Reject"] });
    expect(bob.device.failures).toEqual([]);
    expect(edge.protocolErrors).toEqual([]);
  }, 90_000);
});
