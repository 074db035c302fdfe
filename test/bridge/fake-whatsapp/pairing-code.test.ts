/**
 * Linking by pairing code through the bridge's own session code (the edge's `pair` command) on real
 * Baileys against the fake WhatsApp: the phone types the code the session shows (link-code.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import { baileysNetwork } from "../../../bridge/src/whatsapp/whatsapp.ts";
import { FakePhone } from "../../fake-whatsapp/phone.ts";
import { FakeWhatsApp } from "../../fake-whatsapp/server.ts";
import { startBridge } from "../support/bridge.ts";
import { startFakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";
import { storedEvents } from "./linked-bridge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const PHONE = "4915550004444";
const SESSION = "s-code";

async function world() {
  const log = process.env.FAKE_WA_LOG ? (line: string) => console.log(`[fake-wa] ${line}`) : undefined;
  const whatsapp = await FakeWhatsApp.start(log ? { log } : {});
  const edge = await startFakeEdge();
  cleanup.push(
    () => whatsapp.close(),
    () => edge.close(),
  );
  const bridge = await startBridge(
    edge,
    baileysNetwork({ waWebSocketUrl: whatsapp.url, connectTimeoutMs: 5_000, rootKey: whatsapp.rootKey }),
  );
  cleanup.push(() => bridge.fleet.shutdown());
  await bridge.assign(SESSION);
  return { whatsapp, edge, phone: new FakePhone(whatsapp, PHONE) };
}

/** The session's pairing code for `phoneNumber`, as the edge's `pair` command answers it. */
async function askForCode(edge: Awaited<ReturnType<typeof world>>["edge"], phoneNumber: string) {
  const result = await edge.command(SESSION, "pair", { phoneNumber });
  expect(result).toMatchObject({ ok: true });
  return (result.data as { code: string }).code;
}

describe("pairing by code against the fake WhatsApp", () => {
  it("links the session as the phone's account once its owner types the code", async () => {
    const { whatsapp, edge, phone } = await world();
    const code = await askForCode(edge, PHONE);
    expect(code).toMatch(/^[0-9A-Z]{8}$/);

    const device = await phone.enterCode(code);
    expect(device.jid).toMatch(new RegExp(`^${PHONE}:\\d+@s\\.whatsapp\\.net$`));
    const [connected] = await waitFor(
      () => storedEvents(edge, SESSION, "connected").length > 0 && storedEvents(edge, SESSION, "connected"),
      "connected",
      15_000,
    );
    expect(connected?.me.id).toBe(device.jid);
    expect(whatsapp.logins).toEqual([device.jid]);
  });

  it("links nothing when the phone's owner types a wrong code, and the right one still works", async () => {
    const { whatsapp, edge, phone } = await world();
    const code = await askForCode(edge, PHONE);
    const wrong = code.startsWith("A") ? `B${code.slice(1)}` : `A${code.slice(1)}`;

    await expect(phone.enterCode(wrong)).rejects.toThrow(/wrong pairing code/);
    expect(whatsapp.devices.size).toBe(0);
    // Give a wrongly linked session time to show up: it must not.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(storedEvents(edge, SESSION, "connected")).toEqual([]);
    expect(whatsapp.logins).toEqual([]);

    // The owner types it again, correctly: the same request links.
    const device = await phone.enterCode(code);
    await waitFor(() => storedEvents(edge, SESSION, "connected").length > 0, "connected", 15_000);
    expect(whatsapp.logins).toEqual([device.jid]);
  });

  it("after a wrong code the session can ask for a new one, which links; once linked it asks for none", async () => {
    const { whatsapp, edge, phone } = await world();
    const code = await askForCode(edge, PHONE);
    await expect(phone.enterCode(code === "AAAAAAAA" ? "BBBBBBBB" : "AAAAAAAA")).rejects.toThrow(/wrong/);
    // Baileys marks its creds `registered` on answering the phone, before the phone refused the code:
    // the session is not linked, and a new code is what the owner asks for.
    const again = await askForCode(edge, PHONE);
    expect(again).not.toBe(code);
    const device = await phone.enterCode(again);
    await waitFor(() => storedEvents(edge, SESSION, "connected").length > 0, "connected", 15_000);
    expect(whatsapp.logins).toEqual([device.jid]);
    expect(await edge.command(SESSION, "pair", { phoneNumber: PHONE })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/already paired/),
    });
  });

  it("refuses a code typed on another account's phone", async () => {
    const { whatsapp, edge } = await world();
    const code = await askForCode(edge, PHONE);
    const stranger = new FakePhone(whatsapp, "4915550005555");
    await expect(stranger.enterCode(code)).rejects.toThrow(/no companion asked/);
    expect(whatsapp.devices.size).toBe(0);
  });
});
