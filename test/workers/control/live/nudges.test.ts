// A writer's nudge to its company's feed (issue 31): skipped while nobody watches the company (one
// Durable Object call less per write, test/workers/control/write-budget.test.ts), made at once while
// a board page is open, so the page hears the change without waiting for its feed's next look.
import { describe, expect, it } from "vitest";
import { meterReading, meterSince } from "../../../../workers/meter/meter";
import { call } from "../../helpers";
import { seedCompany } from "../helpers";
import { listen, signedInOwner } from "./sockets";

describe("a create while the company's board is open", () => {
  it("nudges the board at once (2 calls: the session, the feed) and the page hears it", async () => {
    const viewer = await signedInOwner();
    const company = await seedCompany(viewer);
    const board = await listen(`/api/companies/${company.id}/events`, viewer.cookieHeaders);
    const create = (title: string) =>
      call<{ id: string }>("POST", `/api/companies/${company.id}/issues`, {
        body: { title },
        headers: viewer.headers,
      });
    const first = await create("Seen");
    expect(first.status).toBe(201);
    await board.next((frame) => frame.issueId === first.body.id);
    const start = meterReading();
    const second = await create("Seen too");
    expect(second.status).toBe(201);
    expect(meterSince(start).doCalls).toBe(2);
    await board.next((frame) => frame.issueId === second.body.id);
    board.socket.close(1000, "done");
  });
});
