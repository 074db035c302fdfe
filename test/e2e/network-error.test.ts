// `npm start` with WhatsApp unreachable (here: the bridge's WA_WEBSOCKET_URL is a closed local port,
// what a machine with no network sees as a refused or failed connection). The real bridge process runs
// real Baileys (no SIMULATOR): starting a session reports network_error with the socket's reason in the
// API and in the connection.update webhook, never "QR expired", and keeps retrying.
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import type { Envelope } from "../support/messaging.ts";
import { createWebhook, payloadOf, type Receiver, startReceiver } from "../support/receiver.ts";
import { type Stack, startStack } from "../support/stack.ts";

interface Detail {
  state: string;
  status: string;
  lastDisconnect: string | null;
}

let stack: Stack;
let api: ApiClient;
let receiver: Receiver;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  receiver = await startReceiver();
  const url = `ws://127.0.0.1:${await closedPort()}/ws/chat`;
  stack = await startStack({ env: { SIMULATOR: "0", WA_WEBSOCKET_URL: url } });
  api = await adminClient(stack.baseUrl);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

describe("WhatsApp unreachable", () => {
  it("reports network_error with the reason (API and webhook), not a QR expiry, and keeps retrying", async () => {
    const sid = `offline-${Math.random().toString(36).slice(2, 8)}`;
    expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
    await createWebhook(api, sid, {
      name: "state",
      url: receiver.url(`/${sid}`),
      events: ["connection.update"],
    });
    expect((await api.call("POST", `/api/sessions/${sid}/start`)).status).toBe(200);

    const detail = async () => (await api.call<Envelope<Detail>>("GET", `/api/sessions/${sid}`)).body.data;
    const failing = await eventually(
      async () => {
        const now = await detail();
        return now.state === "network_error" ? now : undefined;
      },
      60_000,
      "network_error",
    );
    expect(failing.status).toBe("Disconnected");
    expect(failing.lastDisconnect).toMatch(/WhatsApp unreachable: .*ECONNREFUSED/);
    expect((await api.call("GET", `/api/sessions/${sid}/qr`)).status).not.toBe(200);

    const states = await eventually(
      async () => {
        const payloads = (await receiver.received(`/${sid}`)).map(
          (request) => payloadOf(request) as { data?: { state?: string; lastDisconnect?: string | null } },
        );
        const seen = payloads.map((payload) => payload.data?.state);
        return seen.includes("network_error") ? payloads : undefined;
      },
      30_000,
      "a connection.update webhook with network_error",
    );
    const hook = states.find((payload) => payload.data?.state === "network_error");
    expect(JSON.stringify(hook)).toMatch(/ECONNREFUSED/);
    expect(JSON.stringify(states)).not.toMatch(/QR expired/);

    // Still retrying, still the same honest state: never stopped as if the QR had run out.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const later = await detail();
    expect(later.state).toBe("network_error");
    expect(later.lastDisconnect).not.toMatch(/QR expired/);
  }, 120_000);
});
