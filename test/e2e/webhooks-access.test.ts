// Who may touch which webhook, and what a webhook may be: another user's session answers 404, another
// user's webhook 404, and neither changes anything; invalid bodies and private targets answer 400.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, ownerClient } from "../support/api.ts";
import { connectedSession, personJid, world } from "../support/messaging.ts";
import {
  createWebhook,
  deliveriesOf,
  listWebhooks,
  type Receiver,
  sleep,
  startWebhookStack,
  uniqueId,
  waitFor,
} from "../support/receiver.ts";
import type { Stack } from "../support/stack.ts";

let stack: Stack;
let api: ApiClient;
let other: ApiClient;
let receiver: Receiver;

beforeAll(async () => {
  [stack, receiver] = await startWebhookStack("0,300,600,900");
  api = await adminClient(stack.baseUrl);
  other = await ownerClient(stack.baseUrl, api);
});

afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

describe("access", () => {
  it("another user's session id and another user's webhook id answer 404, and nothing changes", async () => {
    const sid = uniqueId("wh-mine");
    await connectedSession(api, sid);
    const path = `/${sid}/mine`;
    const hook = await createWebhook(api, sid, { name: "mine", url: receiver.url(path), events: ["*"] });
    await world(api, sid, "receive", { from: personJid(), content: { type: "text", text: "private" } });
    const delivery = await waitFor(
      async () => (await deliveriesOf(api, sid, hook.id)).data.find((d) => d.status === "delivered"),
      15_000,
      "a delivered event",
    );
    const theirs = uniqueId("wh-theirs");
    expect((await other.call("POST", "/api/sessions", { name: theirs, sessionId: theirs })).status).toBe(200);

    const before = await listWebhooks(api, sid);
    const logBefore = await deliveriesOf(api, sid, hook.id);
    const arrivedBefore = (await receiver.received(path)).length;
    const change = { name: "stolen", url: receiver.url(`/${sid}/stolen`), events: ["*"] };
    const on = (session: string) => `/api/webhooks/${session}/${hook.id}`;
    const attempts = (session: string): Array<[string, string, unknown]> => [
      ["PUT", on(session), change],
      ["PUT", on(session), { isActive: false }],
      ["POST", `${on(session)}/test`, undefined],
      ["GET", `${on(session)}/deliveries?limit=10&offset=0`, undefined],
      ["POST", `${on(session)}/deliveries/${delivery.id}/redeliver`, undefined],
      ["DELETE", on(session), undefined],
    ];
    const forbidden: Array<[string, string, unknown]> = [
      ["GET", `/api/webhooks/${sid}`, undefined],
      ["POST", `/api/webhooks/${sid}`, change],
      ...attempts(sid),
    ];
    for (const [method, route, body] of forbidden) {
      const response = await other.call(method, route, body);
      expect({ method, route, status: response.status }).toEqual({ method, route, status: 404 });
      expect(response.body).toMatchObject({ status: false });
    }
    for (const [method, route, body] of attempts(theirs)) {
      const response = await other.call(method, route, body);
      expect({ method, route, status: response.status }).toEqual({ method, route, status: 404 });
      expect(JSON.stringify(response.body)).not.toContain(hook.url);
    }
    const theirList = await other.call<{ data: unknown[] }>("GET", `/api/webhooks/${theirs}`);
    expect(theirList.status).toBe(200);
    expect(theirList.body.data).toEqual([]);

    await sleep(1_000);
    expect(await listWebhooks(api, sid)).toEqual(before);
    const logAfter = await deliveriesOf(api, sid, hook.id);
    expect(logAfter.total).toBe(logBefore.total);
    expect(logAfter.data).toEqual(logBefore.data);
    expect((await receiver.received(path)).length).toBe(arrivedBefore);
    expect(await receiver.received(`/${sid}/stolen`)).toEqual([]);
  });

  it("an unknown webhook id or session answers 404", async () => {
    const sid = uniqueId("wh-unknown");
    expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
    expect((await api.call("GET", "/api/webhooks/no-such-session")).status).toBe(404);
    const missing = `/api/webhooks/${sid}/no-such-webhook`;
    expect((await api.call("PUT", missing, { name: "x" })).status).toBe(404);
    expect((await api.call("DELETE", missing)).status).toBe(404);
    expect((await api.call("POST", `${missing}/test`)).status).toBe(404);
    expect((await api.call("GET", `${missing}/deliveries`)).status).toBe(404);
  });
});

describe("validation", () => {
  it("name, url and at least one known event are required; private targets outside the allow-list are refused", async () => {
    const sid = uniqueId("wh-valid");
    expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
    const url = receiver.url(`/${sid}/ok`);
    const bad: unknown[] = [
      { url, events: ["*"] },
      { name: "no url", events: ["*"] },
      { name: "no events", url },
      { name: "empty events", url, events: [] },
      { name: "unknown event", url, events: ["message.nope"] },
      { name: "not a url", url: "not a url", events: ["*"] },
      { name: "ftp", url: "ftp://example.com/hook", events: ["*"] },
      { name: "private", url: "http://10.1.2.3/hook", events: ["*"] },
      { name: "metadata", url: "http://169.254.169.254/latest/meta-data", events: ["*"] },
      { name: "internal name", url: "http://printer.internal/hook", events: ["*"] },
    ];
    for (const body of bad) {
      const response = await api.call("POST", `/api/webhooks/${sid}`, body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
    }
    const hook = await createWebhook(api, sid, { name: "fine", url, events: ["message.received"] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32,}$/);
    const badUpdates: unknown[] = [{ events: ["nope"] }, { url: "http://192.168.1.1/" }, { events: [] }];
    for (const body of badUpdates) {
      const response = await api.call("PUT", `/api/webhooks/${sid}/${hook.id}`, body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
    }
    const listed = await listWebhooks(api, sid);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      id: hook.id,
      name: "fine",
      url,
      events: ["message.received"],
      isActive: true,
    });
  });
});
