// Issue 27's governance on real Baileys against the fake WhatsApp: an agent's send_text through /mcp
// to a stranger waits for the board (the contact receives nothing), and once approved the contact
// decrypts exactly one message.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import { FakePhone } from "../fake-whatsapp/phone.ts";
import { eventually } from "../support/api.ts";
import { createAgent, createCompany } from "../support/control-runs.ts";
import { type FakeWhatsAppStack, pairByQr, startFakeWhatsAppStack } from "../support/fake-whatsapp-stack.ts";

const SID = `mcp-line-${Math.random().toString(36).slice(2, 8)}`;
let world: FakeWhatsAppStack;

beforeAll(async () => {
  world = await startFakeWhatsAppStack();
}, 180_000);

afterAll(async () => {
  await world?.stop();
});

describe("an agent's send to a stranger through MCP, on real Baileys", () => {
  it("sends nothing until the board approves, then exactly one message", async () => {
    const { api, whatsapp, stack } = world;
    expect((await api.call("POST", "/api/sessions", { name: SID, sessionId: SID })).status).toBe(200);
    await pairByQr(api, whatsapp, SID, new FakePhone(whatsapp, "4915550009000"));
    const companyId = await createCompany(api);
    expect((await api.call("PUT", `/api/companies/${companyId}/line`, { sessionId: SID })).status).toBe(200);
    const agent = await createAgent(api, companyId, {});
    const key = await api.call<{ token: string }>("POST", `/api/agents/${agent.id}/keys`, {});
    expect(key.status).toBe(201);

    const client = new Client({ name: "e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key.body.token}` } },
      }),
    );
    const stranger = new FakeContact(whatsapp, "4915550009111", "Grace");
    const result = (await client.callTool({
      name: "send_text",
      arguments: { sessionId: SID, jid: stranger.jid, text: "Hello from an agent" },
    })) as CallToolResult;
    const first = result.content[0];
    const { approvalId } = JSON.parse(first?.type === "text" ? first.text : "{}") as { approvalId: string };
    expect(approvalId).toEqual(expect.any(String));
    expect(stranger.inbox).toEqual([]);

    const approved = await api.call<{ payload: { delivery?: { status: string; messageId: string } } }>(
      "POST",
      `/api/approvals/${approvalId}/approve`,
      {},
    );
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const delivery = approved.body.payload.delivery;
    expect(delivery?.status).toBe("sent");
    const got = await eventually(
      async () => stranger.inbox.find((message) => message.id === delivery?.messageId),
      30_000,
      "the stranger decrypting the approved message",
    );
    expect(got.text).toBe("Hello from an agent");
    expect((await api.call("POST", `/api/approvals/${approvalId}/approve`, {})).status).toBe(200);
    expect(stranger.inbox.map((message) => message.text)).toEqual(["Hello from an agent"]);
  }, 180_000);
});
