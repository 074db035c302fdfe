/**
 * What the account keeps on WhatsApp's servers, changed through the bridge on real Baileys against the
 * fake WhatsApp (account-settings.ts): blocking and unblocking a contact (by LID, with the number for a
 * block, as WhatsApp wants it now), the about text, and the profile picture set and removed.
 */
import sharp from "sharp";
import { afterEach, describe, expect, it } from "vitest";
import { AccountSettings } from "../../fake-whatsapp/account-settings.ts";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import { lidJid } from "../../fake-whatsapp/directory.ts";
import { waitFor } from "../support/wait.ts";
import { linkedBridge, storedEvents } from "./linked-bridge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const SESSION = "settings";
const ACCOUNT = "4915550007777";

describe("the account's settings on WhatsApp, through the bridge on real Baileys", () => {
  it("blocks and unblocks a contact, by LID with the number alongside", async () => {
    const { whatsapp, edge, device } = await linkedBridge(cleanup, {
      session: SESSION,
      phoneNumber: ACCOUNT,
    });
    const settings = new AccountSettings(whatsapp);
    const kim = new FakeContact(whatsapp, "4915550002626", "Kim");
    await kim.sendText(device, "hello");
    await waitFor(() => storedEvents(edge, SESSION, "message").length > 0, "Kim's message", 10_000);

    expect(
      await edge.command(SESSION, "wa", { op: "contact.block", jid: kim.jid, block: true }),
    ).toMatchObject({
      ok: true,
    });
    expect([...settings.of(ACCOUNT).blocked.values()]).toEqual([{ lid: lidJid(kim.account), pn: kim.jid }]);
    expect(
      await edge.command(SESSION, "wa", { op: "contact.block", jid: kim.jid, block: false }),
    ).toMatchObject({
      ok: true,
    });
    expect(settings.of(ACCOUNT).blocked.size).toBe(0);
  });

  it("blocks a number that never wrote to the account (its LID looked up first)", async () => {
    const { whatsapp, edge } = await linkedBridge(cleanup, { session: SESSION, phoneNumber: ACCOUNT });
    const settings = new AccountSettings(whatsapp);
    const spammer = new FakeContact(whatsapp, "4915550002727", "Spam");
    const blocked = await edge.command(SESSION, "wa", { op: "contact.block", jid: spammer.jid, block: true });
    expect(blocked, JSON.stringify(blocked)).toMatchObject({ ok: true });
    expect([...settings.of(ACCOUNT).blocked.values()]).toEqual([
      { lid: lidJid(spammer.account), pn: spammer.jid },
    ]);
  });

  it("sets the about text and the profile picture, and removes the picture", async () => {
    const { whatsapp, edge } = await linkedBridge(cleanup, { session: SESSION, phoneNumber: ACCOUNT });
    const settings = new AccountSettings(whatsapp);
    expect(await edge.command(SESSION, "wa", { op: "profile.status", status: "Open 9 to 5" })).toMatchObject({
      ok: true,
    });
    expect(settings.of(ACCOUNT).about).toBe("Open 9 to 5");

    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#123456" } })
      .png()
      .toBuffer();
    edge.media.set(`${SESSION}/upload_0000009`, { bytes: png, mimetype: "image/png", fileName: "me.png" });
    const set = await edge.command(SESSION, "wa", {
      op: "picture.set",
      source: { upload: "upload_0000009" },
    });
    expect(set, JSON.stringify(set)).toMatchObject({ ok: true });
    const picture = settings.of(ACCOUNT).picture;
    // Baileys sends a JPEG it made from the upload.
    expect(picture?.subarray(0, 2).toString("hex")).toBe("ffd8");
    expect((await sharp(picture ?? Buffer.alloc(0)).metadata()).format).toBe("jpeg");

    expect(await edge.command(SESSION, "wa", { op: "picture.remove" })).toMatchObject({ ok: true });
    expect(settings.of(ACCOUNT).picture).toBeNull();
  });
});
