// `npm start` with real Baileys (no SIMULATOR) when WhatsApp will not have the bridge. First the
// protocol-level fake WhatsApp (test/fake-whatsapp/) refuses the bundled WhatsApp Web version (405, as
// WhatsApp does once a version is too old) and WhatsApp Web's sw.js still names that version: the
// bridge reads it once, retries nothing new, and the session fails naming WA_VERSION_URL, with no loop.
// Then it presents a forged certificate chain: the session fails naming the certificate, unretried.
// Then the fake is gone and WA_WEBSOCKET_URL is a closed local port, what a machine with no network
// sees as a refused connection: starting a session reports network_error with the socket's reason in
// the API and in the connection.update webhook, never "QR expired", and keeps retrying.
import { DEFAULT_CONNECTION_CONFIG } from "@whiskeysockets/baileys";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeWhatsApp } from "../fake-whatsapp/server.ts";
import { WebVersionHost } from "../fake-whatsapp/web-version.ts";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { sessionDetail, sessionInState } from "../support/fake-whatsapp-stack.ts";
import { createWebhook, payloadOf, type Receiver, startReceiver } from "../support/receiver.ts";
import { type Stack, startStack } from "../support/stack.ts";

let stack: Stack;
let api: ApiClient;
let receiver: Receiver;
let whatsapp: FakeWhatsApp;
let web: WebVersionHost;

beforeAll(async () => {
  receiver = await startReceiver();
  const [major, minor, patch] = DEFAULT_CONNECTION_CONFIG.version;
  whatsapp = await FakeWhatsApp.start({ minimumVersion: [major, minor, patch + 1] });
  web = await WebVersionHost.start(patch);
  stack = await startStack({
    env: {
      SIMULATOR: "0",
      WA_WEBSOCKET_URL: whatsapp.url,
      WA_CERT_ROOT_KEY: whatsapp.rootKey.toString("hex"),
      WA_VERSION_URL: web.url,
    },
  });
  api = await adminClient(stack.baseUrl);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
  await whatsapp?.close();
  await web?.stop();
});

/** A new session, its connection.update webhooks to the receiver, started. */
async function startedSession(prefix: string): Promise<string> {
  const sid = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
  await createWebhook(api, sid, {
    name: "state",
    url: receiver.url(`/${sid}`),
    events: ["connection.update"],
  });
  expect((await api.call("POST", `/api/sessions/${sid}/start`)).status).toBe(200);
  return sid;
}

describe("WhatsApp refuses the client version", () => {
  it("fails the session naming WA_VERSION_URL when the current version is still refused, without looping", async () => {
    const sid = await startedSession("old-version");
    const failed = await sessionInState(api, sid, "failed", 60_000);
    expect(failed.status).toBe("Disconnected");
    expect(failed.lastDisconnect).toMatch(/\(405\).*WA_VERSION_URL/);
    expect(web.hits).toBeGreaterThanOrEqual(1);
    expect(whatsapp.clientVersions[0]).toEqual([...DEFAULT_CONNECTION_CONFIG.version]);
    const attempts = whatsapp.clientVersions.length;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(whatsapp.clientVersions.length).toBe(attempts);
    expect((await sessionDetail(api, sid)).state).toBe("failed");
  }, 120_000);
});

describe("a server whose certificate does not lead to WhatsApp's root", () => {
  it("fails the session with the reason in the API, before any login, without retrying", async () => {
    // The fake now presents a chain whose leaf is signed by a stranger's key (a forged server).
    whatsapp.certificates = "leaf-not-from-intermediate";
    const versionsBefore = whatsapp.clientVersions.length;
    const sid = await startedSession("forged-cert");
    const failed = await sessionInState(api, sid, "failed", 60_000);
    expect(failed.status).toBe("Disconnected");
    expect(failed.lastDisconnect).toMatch(
      /server certificate was refused: the leaf certificate is not signed by the intermediate.*not retried/,
    );
    expect((await api.call("GET", `/api/sessions/${sid}/qr`)).status).not.toBe(200);
    const attempts = whatsapp.connectionsAccepted;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(whatsapp.connectionsAccepted).toBe(attempts);
    // No client finish (the login or registration payload) ever reached the forged server.
    expect(whatsapp.clientVersions.length).toBe(versionsBefore);
  }, 120_000);
});

describe("WhatsApp unreachable", () => {
  it("reports network_error with the reason (API and webhook), not a QR expiry, and keeps retrying", async () => {
    // The fake is gone: its port now refuses connections, as an unreachable network does.
    await whatsapp.close();
    const sid = await startedSession("offline");
    const failing = await sessionInState(api, sid, "network_error", 60_000);
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
    const later = await sessionDetail(api, sid);
    expect(later.state).toBe("network_error");
    expect(later.lastDisconnect).not.toMatch(/QR expired/);
  }, 120_000);
});
