// A company's line sends what it queued while its session was down as soon as the session connects
// again (the SessionDO announces it: workers/core/session-connected.ts), without waiting for the cron.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sendDueNotices } from "../../../../workers/control/line/sender";
import { BASE, dispatch } from "../../helpers";
import { linkedLine } from "../../mcp/whatsapp-line";
import { eventually } from "../../patience";
import { lineComesBack, lineGoesDown, linkNumber, noticesOf, polls, requestApproval } from "./notices-world";

describe("the line reconnecting", () => {
  it("sends what queued while the line was down as soon as it reconnects, without waiting for the cron", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    await lineGoesDown(line);
    const held = await requestApproval(line, "Held while down");
    expect((await noticesOf(line.company.id)).map((row) => row.status)).toEqual(["queued"]);

    await lineComesBack(line);
    await eventually(async () => (await noticesOf(line.company.id))[0]?.status === "sent");
    expect((await noticesOf(line.company.id))[0]?.subject_id).toBe(held);
    expect(polls(line, ownerPhone).map((sent) => JSON.stringify(sent.content))[0]).toContain(
      "Held while down",
    );
  });
});

describe("two senders at once", () => {
  it("never lets a member's later notice overtake one another sender is still sending", async () => {
    const line = await linkedLine();
    const ownerPhone = await linkNumber(line.company.id, line.owner);
    await lineGoesDown(line);
    for (const title of ["One", "Two", "Three"]) await requestApproval(line, title);
    // Due only later, so the reconnect's own pass leaves them to the two passes below.
    const later = Date.now() + 3_600_000;
    await env.DB.prepare("UPDATE line_notices SET not_before = ? WHERE company_id = ?")
      .bind(later, line.company.id)
      .run();
    await lineComesBack(line);

    // The first pass stalls on its first send (a slow gateway); a second pass runs meanwhile.
    let release = () => {};
    const stalled = new Promise<void>((resolve) => {
      release = resolve;
    });
    let firstSendStarted = false;
    const slowFetch = async (request: Request) => {
      if (!firstSendStarted) {
        firstSendStarted = true;
        await stalled;
      }
      return dispatch(request);
    };
    const first = sendDueNotices(env, slowFetch, BASE, line.company.id, later);
    await eventually(async () => firstSendStarted);
    await sendDueNotices(env, (request) => dispatch(request), BASE, line.company.id, later);
    release();
    await first;

    const order = polls(line, ownerPhone).map((sent) => JSON.stringify(sent.content));
    expect(order).toHaveLength(3);
    expect(order.map((content) => /asks to (\w+)/.exec(content)?.[1])).toEqual(["One", "Two", "Three"]);
    expect((await noticesOf(line.company.id)).map((row) => row.status)).toEqual(["sent", "sent", "sent"]);
  });
});
