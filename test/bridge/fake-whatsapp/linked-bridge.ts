/**
 * A bridge session (the bridge's own FleetLink and session code on real Baileys) linked by QR to a fake
 * phone's account on the fake WhatsApp, with a fake edge: what the messaging tests start from.
 */
import { Agent } from "node:https";
import { Agent as DispatcherAgent } from "undici";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import { baileysNetwork } from "../../../bridge/src/whatsapp/whatsapp.ts";
import { FakePhone } from "../../fake-whatsapp/phone.ts";
import { FakeWhatsApp } from "../../fake-whatsapp/server.ts";
import { startBridge } from "../support/bridge.ts";
import { type FakeEdge, startFakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";

/** The session's events of one kind, as the edge stored them. */
export function storedEvents<K extends SessionEvent["kind"]>(edge: FakeEdge, session: string, kind: K) {
  return edge.session(session).stored.filter((event): event is Extract<SessionEvent, { kind: K }> => {
    return event.kind === kind;
  });
}

/**
 * Links `session` to a fake phone's account and waits until it is connected; `media` adds the media
 * host; `appState` has the phone share its app-state keys with the companion, as real phones do.
 * Each step that needs undoing is pushed onto `cleanup`.
 */
export async function linkedBridge(
  cleanup: Array<() => Promise<void>>,
  {
    session,
    media = false,
    phoneNumber = "4915550009999",
    prepare,
    appState = false,
  }: {
    session: string;
    media?: boolean;
    phoneNumber?: string;
    /** Runs on the new server before anything connects (e.g. the account's privacy settings). */
    prepare?: (whatsapp: FakeWhatsApp) => void;
    /** The phone shares its app-state keys with the new companion (app-state-phone.ts). */
    appState?: boolean;
  },
) {
  const log = process.env.FAKE_WA_LOG ? (line: string) => console.log(`[fake-wa] ${line}`) : undefined;
  const whatsapp = await FakeWhatsApp.start(log ? { log } : {});
  prepare?.(whatsapp);
  const edge = await startFakeEdge();
  cleanup.push(
    () => whatsapp.close(),
    () => edge.close(),
  );
  const phone = new FakePhone(whatsapp, phoneNumber);
  if (appState) phone.appState.shareKeysOnPairing();
  // Uploads go over HTTPS to the fake media host, whose certificate only this agent trusts.
  const certificate = media ? (await whatsapp.messaging.enableMedia()).certificate : undefined;
  const mediaAgent = certificate ? new Agent({ ca: certificate }) : undefined;
  // Downloads (media.download) go through the global fetch: this dispatcher trusts the same certificate.
  const mediaDispatcher = certificate ? new DispatcherAgent({ connect: { ca: certificate } }) : undefined;
  if (mediaDispatcher) cleanup.push(() => mediaDispatcher.close());
  const bridge = await startBridge(
    edge,
    baileysNetwork({
      waWebSocketUrl: whatsapp.url,
      connectTimeoutMs: 5_000,
      rootKey: whatsapp.rootKey,
      ...(mediaAgent ? { mediaAgent } : {}),
      ...(mediaDispatcher ? { mediaDispatcher } : {}),
    }),
  );
  cleanup.push(() => bridge.fleet.shutdown());
  await bridge.assign(session);
  const [qr] = await waitFor(
    () => storedEvents(edge, session, "qr").length > 0 && storedEvents(edge, session, "qr"),
    "qr",
    10_000,
  );
  const device = await phone.scan(qr?.qr ?? "");
  await waitFor(() => storedEvents(edge, session, "connected").length > 0, "connected", 15_000);
  return { whatsapp, edge, phone, device, bridge };
}

/** A new bridge process takes `session` over from the edge's copy of the auth state (no QR). */
export async function restartBridge(
  cleanup: Array<() => Promise<void>>,
  { session, edge, whatsapp }: { session: string; edge: FakeEdge; whatsapp: FakeWhatsApp },
  old: { fleet: { shutdown(): Promise<void> } },
) {
  const before = storedEvents(edge, session, "connected").length;
  await old.fleet.shutdown();
  const bridge = await startBridge(
    edge,
    baileysNetwork({ waWebSocketUrl: whatsapp.url, connectTimeoutMs: 5_000, rootKey: whatsapp.rootKey }),
  );
  cleanup.push(() => bridge.fleet.shutdown());
  edge.session(session).epoch += 1;
  edge.session(session).lastSeq = 0;
  await bridge.assign(session);
  await waitFor(() => storedEvents(edge, session, "connected").length > before, "connected again", 15_000);
  return bridge;
}
