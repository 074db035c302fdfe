/**
 * `numbers.check` on real Baileys against the fake WhatsApp, which resolves numbers as WhatsApp does
 * (test/fake-whatsapp/directory.ts `phoneForms`): a Brazilian mobile asked with its ninth digit reaches
 * an account registered without it (and the reverse), a Mexican `521…` one registered as `52…`. Each
 * answer names the number as asked and the JID WhatsApp resolved it to.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import { linkedBridge } from "./linked-bridge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const SESSION = "n1";

describe("numbers.check through the bridge on real Baileys", () => {
  it("maps numbers WhatsApp normalises (Brazil's ninth digit, Mexico's 1) to their account, in one query", async () => {
    const { whatsapp, edge } = await linkedBridge(cleanup, { session: SESSION });
    // Registered before the ninth digit: the account is 55 11 8765-4321.
    const joao = new FakeContact(whatsapp, "551187654321", "João");
    // Registered with it: 55 21 99876-5432.
    const maria = new FakeContact(whatsapp, "5521998765432", "Maria");
    // Registered as 52 + ten digits; often dialled as 52 1 + ten digits.
    const lupe = new FakeContact(whatsapp, "525512345678", "Lupe");
    const plain = new FakeContact(whatsapp, "4915550003333", "Plain");

    const asked = [
      "5511987654321", // João with the ninth digit
      "552198765432", // Maria without it
      "5215512345678", // Lupe with the 1
      plain.phoneNumber,
      "5511912345678", // nobody
    ];
    const answer = await edge.command(SESSION, "wa", { op: "numbers.check", numbers: asked });
    expect(answer).toMatchObject({
      ok: true,
      data: [
        { number: "5511987654321", exists: true, jid: joao.jid },
        { number: "552198765432", exists: true, jid: maria.jid },
        { number: "5215512345678", exists: true, jid: lupe.jid },
        { number: plain.phoneNumber, exists: true, jid: plain.jid },
        { number: "5511912345678", exists: false, jid: null },
      ],
    });
    expect(joao.jid).toBe("551187654321@s.whatsapp.net");
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);
});
