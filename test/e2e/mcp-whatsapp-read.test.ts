// The MCP WhatsApp read tools on `npm start` with real Baileys against the protocol-level fake WhatsApp
// (test/fake-whatsapp/): the official SDK client over Streamable HTTP at /mcp, with the API key a user
// created. A fake contact's Signal-encrypted text is read back by read_messages, and check_numbers
// asks WhatsApp (usync) about a registered and an unregistered number.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import { eventually } from "../support/api.ts";
import { type FakeWhatsAppStack, pairByQr, startFakeWhatsAppStack } from "../support/fake-whatsapp-stack.ts";

let world: FakeWhatsAppStack;
let client: Client;

beforeAll(async () => {
  world = await startFakeWhatsAppStack();
  client = new Client({ name: "switchboard-e2e", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${world.stack.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${world.api.key}` } },
    }),
  );
}, 120_000);

afterAll(async () => {
  await client?.close();
  await world?.stop();
});

const SID = `mcpread-${Math.random().toString(36).slice(2, 8)}`;

/** A tool's JSON answer; a tool error fails with its text. */
async function tool<T>(name: string, args: Record<string, unknown>): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
  if (result.isError) throw new Error(`${name}: ${text}`);
  return JSON.parse(text) as T;
}

describe("MCP WhatsApp read tools on real Baileys against the fake WhatsApp", () => {
  it("read_messages returns what a contact's phone sent; check_numbers tells registered from not", async () => {
    const { api, whatsapp } = world;
    expect((await api.call("POST", "/api/sessions", { name: SID, sessionId: SID })).status).toBe(200);
    const device = await pairByQr(api, whatsapp, SID, "4915550007070");

    const contact = new FakeContact(whatsapp, "4915550007171", "Karla");
    const sent = await contact.sendText(device, "is the order ready?");
    const read = await eventually(
      async () => {
        const page = await tool<{ messages: { id: string; text: string; fromMe: boolean }[] }>(
          "read_messages",
          { sessionId: SID, jid: contact.jid },
        );
        return page.messages.find((message) => message.id === sent.id);
      },
      30_000,
      "the contact's message in read_messages",
    );
    expect(read).toMatchObject({ text: "is the order ready?", fromMe: false, sender: contact.jid });

    const { results } = await tool<{ results: unknown[] }>("check_numbers", {
      sessionId: SID,
      numbers: ["+49 155 5000 7171", "4915550007999"],
    });
    expect(results).toEqual([
      { number: "+49 155 5000 7171", exists: true, jid: contact.jid },
      { number: "4915550007999", exists: false, jid: null },
    ]);
  });
});
