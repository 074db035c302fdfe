// Scheduled messages on the real stack: one fires on time and reaches the peer; one for a stopped
// session is retried and ends FAILED with a reason once the (shortened) retry limit is hit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { connectedSession, type Envelope, inbox, personJid } from "../support/messaging.ts";
import { type Stack, startStack } from "../support/stack.ts";

type Scheduled = {
  id: string;
  status: string;
  attempts: number;
  lastError: string | null;
  messageId: string | null;
};

let stack: Stack;
let api: ApiClient;

beforeAll(async () => {
  stack = await startStack({
    env: { SIMULATOR: "1", SCHEDULER_RETRY_LIMIT: "3", SCHEDULER_RETRY_MS: "500" },
  });
  api = await adminClient(stack.baseUrl);
});

afterAll(async () => {
  await stack?.stop();
});

const scheduled = async (session: string, id: string) =>
  (await api.call<Envelope<Scheduled>>("GET", `/api/scheduler/${session}/${id}`)).body.data;

async function schedule(session: string, body: Record<string, unknown>): Promise<Scheduled> {
  const res = await api.call<Envelope<Scheduled>>("POST", `/api/scheduler/${session}`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

describe("scheduled messages", () => {
  it("a message scheduled 2 s ahead arrives in the peer's inbox and becomes SENT", async () => {
    await connectedSession(api, "sched-on");
    const peer = personJid();
    const sendAt = new Date(Date.now() + 2_000).toISOString();
    const { id } = await schedule("sched-on", { jid: peer, content: "On time", sendAt });

    const sent = await eventually(
      async () => {
        const row = await scheduled("sched-on", id);
        return row.status === "SENT" ? row : undefined;
      },
      20_000,
      "the scheduled message to be SENT",
    );
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(sendAt));
    const received = await inbox<{ chat: string; id: string; content: { type: string; text?: string } }>(
      api,
      "sched-on",
      peer,
    );
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ id: sent.messageId, content: { type: "text", text: "On time" } });
  });

  it("a message for a stopped session is retried and FAILED with a reason after the limit", async () => {
    await connectedSession(api, "sched-off");
    expect((await api.call("POST", "/api/sessions/sched-off/stop")).status).toBe(200);
    const { id } = await schedule("sched-off", {
      jid: personJid(),
      content: "Nobody home",
      sendAt: new Date(Date.now() + 500).toISOString(),
    });
    const failed = await eventually(
      async () => {
        const row = await scheduled("sched-off", id);
        return row.status === "FAILED" ? row : undefined;
      },
      20_000,
      "the scheduled message to fail",
    );
    expect(failed.attempts).toBe(3);
    expect(failed.lastError).toContain("session not connected after 3 attempts");
    const history = await api.call<Envelope<Scheduled[]>>("GET", "/api/scheduler/sched-off?tab=history");
    expect(history.body.data.map((row) => row.id)).toContain(id);
  });
});
