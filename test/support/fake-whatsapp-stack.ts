// `npm start` with real Baileys (no SIMULATOR) against the protocol-level fake WhatsApp
// (test/fake-whatsapp/, WA_WEBSOCKET_URL), and the steps every suite on it takes: a session paired by
// the API's QR, which a fake phone scans, and the webhooks it delivered.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_CONNECTION_CONFIG } from "@whiskeysockets/baileys";
import { FakePhone } from "../fake-whatsapp/phone.ts";
import { FakeWhatsApp, type LinkedDevice } from "../fake-whatsapp/server.ts";
import { WebVersionHost } from "../fake-whatsapp/web-version.ts";
import { type ApiClient, adminClient, eventually } from "./api.ts";
import type { Envelope } from "./messaging.ts";
import { payloadOf, type Receiver, startReceiver } from "./receiver.ts";
import { type Stack, startStack } from "./stack.ts";

export interface FakeWhatsAppStack {
  whatsapp: FakeWhatsApp;
  /** WhatsApp Web's sw.js, where the bridge reads the current version (WA_VERSION_URL). */
  web: WebVersionHost;
  /** What a bridge process needs to reach the fake (for suites that start their own: startBridgeProcess). */
  bridgeEnv: Record<string, string>;
  stack: Stack;
  api: ApiClient;
  receiver: Receiver;
  stop(): Promise<void>;
}

export interface SessionDetail {
  state: string;
  status: string;
  me: { id: string } | null;
  lastDisconnect: string | null;
}

/** `env` adds to the stack's (BRIDGE=0 and FLEET_GRACE_MS for suites that run their own bridges). */
export async function startFakeWhatsAppStack(env: Record<string, string> = {}): Promise<FakeWhatsAppStack> {
  const whatsapp = await FakeWhatsApp.start();
  // The bridge reads the current WhatsApp Web version here, never from the internet.
  const web = await WebVersionHost.start(DEFAULT_CONNECTION_CONFIG.version[2]);
  const receiver = await startReceiver();
  // The media host is HTTPS with a certificate made for this run; the bridge process trusts it the way
  // an operator adds a CA to Node (NODE_EXTRA_CA_CERTS): no test hook in the product.
  const media = await whatsapp.messaging.enableMedia();
  const certificate = path.join(mkdtempSync(path.join(tmpdir(), "fake-wa-ca-")), "media.pem");
  writeFileSync(certificate, media.certificate);
  const bridgeEnv = {
    SIMULATOR: "0",
    WA_WEBSOCKET_URL: whatsapp.url,
    // The fake's certificate chain leads to its own root, not WhatsApp's (which stays pinned otherwise).
    WA_CERT_ROOT_KEY: whatsapp.rootKey.toString("hex"),
    WA_VERSION_URL: web.url,
    NODE_EXTRA_CA_CERTS: certificate,
    // History chunks are fetched by direct path from WhatsApp's default media host: here, the fake's.
    WA_MEDIA_HOST: media.hostname,
  };
  const stack = await startStack({ env: { ...bridgeEnv, ...env } });
  const api = await adminClient(stack.baseUrl);
  return {
    whatsapp,
    web,
    bridgeEnv,
    stack,
    api,
    receiver,
    async stop() {
      await stack.stop();
      await receiver.stop();
      await whatsapp.close();
      await web.stop();
    },
  };
}

export async function sessionDetail(api: ApiClient, sid: string): Promise<SessionDetail> {
  return (await api.call<Envelope<SessionDetail>>("GET", `/api/sessions/${sid}`)).body.data;
}

/** Waits until the session reports `state` (through the API), and answers its detail. */
export function sessionInState(api: ApiClient, sid: string, state: string, timeoutMs = 60_000) {
  return eventually(
    async () => {
      const detail = await sessionDetail(api, sid);
      return detail.state === state ? detail : undefined;
    },
    timeoutMs,
    `session ${sid} ${state}`,
  );
}

/** The QR the API shows once the session's socket is up and waiting to be linked. */
export function qrShown(api: ApiClient, sid: string): Promise<string> {
  return eventually(
    async () => {
      const res = await api.call<{ qr: string }>("GET", `/api/sessions/${sid}/qr`);
      return res.status === 200 ? res.body.qr : undefined;
    },
    60_000,
    "a QR from real Baileys",
  );
}

/**
 * Starts a created session, has the account's phone (`phone`, a number or a FakePhone) scan the QR the
 * API shows, and waits until the session is connected; answers the linked device (the bridge's Baileys).
 */
export async function pairByQr(
  api: ApiClient,
  whatsapp: FakeWhatsApp,
  sid: string,
  phone: string | FakePhone,
): Promise<LinkedDevice> {
  const started = await api.call("POST", `/api/sessions/${sid}/start`);
  if (started.status !== 200) throw new Error(`start ${sid}: ${started.status}`);
  const qr = await qrShown(api, sid);
  const scanner = typeof phone === "string" ? new FakePhone(whatsapp, phone) : phone;
  const device = await scanner.scan(qr);
  await sessionInState(api, sid, "connected");
  return device;
}

/** The `data` of every webhook of `event` delivered to the receiver's path `/<sid>`, in order. */
export async function webhookData(receiver: Receiver, sid: string, event: string): Promise<unknown[]> {
  return (await receiver.received(`/${sid}`))
    .map(payloadOf)
    .filter((payload) => payload.event === event)
    .map((payload) => payload.data);
}

/**
 * Starts a created session, asks the API for a pairing code for the phone's number and has the phone's
 * owner type it (link-code.ts); waits until the session is connected and answers the linked device.
 */
export async function pairByCode(api: ApiClient, sid: string, phone: FakePhone): Promise<LinkedDevice> {
  const started = await api.call("POST", `/api/sessions/${sid}/start`);
  if (started.status !== 200) throw new Error(`start ${sid}: ${started.status}`);
  await qrShown(api, sid);
  const paired = await api.call<Envelope<{ pairingCode: string }>>("POST", `/api/sessions/${sid}/pair`, {
    phoneNumber: phone.phoneNumber,
  });
  if (paired.status !== 200) throw new Error(`pair ${sid}: ${paired.status} ${JSON.stringify(paired.body)}`);
  const device = await phone.enterCode(paired.body.data.pairingCode);
  await sessionInState(api, sid, "connected");
  return device;
}
