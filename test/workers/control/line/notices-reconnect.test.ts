// A company's line sends what it queued while its session was down as soon as the session connects
// again (the SessionDO announces it: workers/core/session-connected.ts), without waiting for the cron.
import { describe, expect, it } from "vitest";
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
