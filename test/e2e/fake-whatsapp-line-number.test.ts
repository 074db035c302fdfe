// Issue 28 on real Baileys against the fake WhatsApp: a member links their own number, the company's
// line sends the 6-digit code, the member's phone (a fake contact) decrypts it, and the member confirms
// it with the code it read.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import { FakePhone } from "../fake-whatsapp/phone.ts";
import { eventually } from "../support/api.ts";
import { createCompany } from "../support/control-runs.ts";
import { type FakeWhatsAppStack, pairByQr, startFakeWhatsAppStack } from "../support/fake-whatsapp-stack.ts";

const SID = `line-number-${Math.random().toString(36).slice(2, 8)}`;
let world: FakeWhatsAppStack;

beforeAll(async () => {
  world = await startFakeWhatsAppStack();
}, 180_000);

afterAll(async () => {
  await world?.stop();
});

describe("a member's own number on the company's line, on real Baileys", () => {
  it("the phone receives the code and the member verifies with it", async () => {
    const { api, whatsapp } = world;
    expect((await api.call("POST", "/api/sessions", { name: SID, sessionId: SID })).status).toBe(200);
    await pairByQr(api, whatsapp, SID, new FakePhone(whatsapp, "4915550008000"));
    const companyId = await createCompany(api);
    expect((await api.call("PUT", `/api/companies/${companyId}/line`, { sessionId: SID })).status).toBe(200);
    const me = `/api/companies/${companyId}/line/members/me`;
    const phone = new FakeContact(whatsapp, "4915550008111", "Ada");

    const put = await api.call<{ phone: string; verified: boolean }>("PUT", me, { phone: "+4915550008111" });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ phone: "4915550008111", verified: false });
    const got = await eventually(
      async () => phone.inbox.find((message) => /Your Switchboard code for /.test(message.text ?? "")),
      30_000,
      "the member's phone decrypting the code",
    );
    const code = got.text?.match(/: (\d{6}) \(valid 10 minutes\)$/)?.[1];
    expect(code).toMatch(/^\d{6}$/);

    const verified = await api.call<{ verified: boolean }>("POST", `${me}/verify`, { code });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expect(verified.body.verified).toBe(true);
    expect(phone.inbox).toHaveLength(1);
  }, 180_000);
});
