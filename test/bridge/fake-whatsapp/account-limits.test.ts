/**
 * WhatsApp's limits on an account that reaches out too much (issue 29, "send caps surfaced"), on real
 * Baileys against the fake WhatsApp: the reach-out timelock WhatsApp announces reaches the edge as
 * `account.limits`; a first message to someone new is refused by the server (463) and reported as FAILED
 * with the reason, not as sent; a chat the contact started still works; the new-chat cap is reported.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import { AccountLimits } from "../../fake-whatsapp/account-limits.ts";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import type { FakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";
import { linkedBridge, storedEvents } from "./linked-bridge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const SESSION = "limits";
const ACCOUNT = "4915550008888";
const stored = <K extends SessionEvent["kind"]>(edge: FakeEdge, kind: K) => storedEvents(edge, SESSION, kind);

async function send(edge: FakeEdge, to: string, messageId: string) {
  return edge.command(SESSION, "wa", { op: "send", to, messageId, content: { type: "text", text: "hi" } });
}

describe("WhatsApp's limits on the account, through the bridge on real Baileys", () => {
  it("the reach-out timelock is announced, and a first message to someone new fails with its reason", async () => {
    const { whatsapp, edge, device } = await linkedBridge(cleanup, {
      session: SESSION,
      phoneNumber: ACCOUNT,
    });
    const limits = new AccountLimits(whatsapp);
    const known = new FakeContact(whatsapp, "4915550001212", "Known");
    const stranger = new FakeContact(whatsapp, "4915550001313", "Stranger");
    await known.sendText(device, "hello first");
    await waitFor(() => stored(edge, "message").length > 0, "the known contact's message", 10_000);

    const until = new Date(Date.now() + 3_600_000);
    limits.lockReachout(ACCOUNT, { until, enforcementType: "DEFAULT" });
    const [announced] = await waitFor(
      () => stored(edge, "account.limits").length > 0 && stored(edge, "account.limits"),
      "account.limits",
      10_000,
    );
    expect(announced?.limits).toEqual({
      reachoutTimelock: {
        active: true,
        until: Math.floor(until.getTime() / 1000) * 1000,
        enforcementType: "DEFAULT",
      },
    });

    // WhatsApp refuses the first message to the stranger; the one to the known contact goes through.
    expect(await send(edge, stranger.jid, "FIRST-TO-STRANGER")).toMatchObject({ ok: true });
    expect(await send(edge, known.jid, "REPLY-TO-KNOWN")).toMatchObject({ ok: true });
    const failed = await waitFor(
      () => stored(edge, "message.status").find((event) => event.id === "FIRST-TO-STRANGER"),
      "the stranger's message failing",
      10_000,
    );
    expect(failed).toMatchObject({
      status: "FAILED",
      reason: "WhatsApp refused it: this account may not start new chats now (reach-out timelock, 463)",
    });
    await waitFor(
      () => known.inbox.some((message) => message.id === "REPLY-TO-KNOWN"),
      "the reply delivered",
      10_000,
    );
    expect(stranger.inbox).toEqual([]);
    expect(limits.refused).toEqual([expect.stringMatching(/ FIRST-TO-STRANGER$/)]);

    limits.liftReachout(ACCOUNT);
    await waitFor(
      () => stored(edge, "account.limits").at(-1)?.limits.reachoutTimelock?.active === false,
      "the lock lifted",
      10_000,
    );
  });

  it("the new-chat message cap is reported as WhatsApp announces it", async () => {
    const { whatsapp, edge } = await linkedBridge(cleanup, { session: SESSION, phoneNumber: ACCOUNT });
    const limits = new AccountLimits(whatsapp);
    const cycleEndsAt = new Date(Date.now() + 86_400_000);
    limits.announceCap(ACCOUNT, { used: 48, total: 50, status: "SECOND_WARNING", cycleEndsAt });
    const [announced] = await waitFor(
      () => stored(edge, "account.limits").length > 0 && stored(edge, "account.limits"),
      "account.limits",
      10_000,
    );
    expect(announced?.limits).toEqual({
      newChatCap: {
        status: "SECOND_WARNING",
        used: 48,
        total: 50,
        cycleEndsAt: Math.floor(cycleEndsAt.getTime() / 1000) * 1000,
      },
    });
  });
});
