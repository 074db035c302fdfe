// An agent reads WhatsApp only on its company's line: the line is the one session it sees, its
// messages read as the owner's would, and the owner's other sessions are as unknown as another tenant's.
import { describe, expect, it } from "vitest";
import { call } from "../helpers";
import { callTool, connect, jsonOf, textOf } from "./client";
import { linkedLine, personJid } from "./whatsapp-line";

describe("an agent's reads on the company's line", () => {
  it("list_sessions shows the line alone; read_messages reads it; the owner's other session is 404", async () => {
    const line = await linkedLine();
    const other = await call<{ data: { sessionId: string } }>("POST", "/api/sessions", {
      body: { name: "Private" },
      headers: line.owner.headers,
    });
    expect(other.status).toBe(200);
    const contact = personJid();
    await line.receiveFrom(contact, "is the order ready?");
    const client = await connect(line.agent.headers);

    const listed = jsonOf<{ sessions: Array<{ sessionId: string }> }>(
      await callTool(client, "list_sessions"),
    );
    expect(listed.sessions.map((session) => session.sessionId)).toEqual([line.session.slug]);

    await expect
      .poll(async () =>
        textOf(await callTool(client, "read_messages", { sessionId: line.session.slug, jid: contact })),
      )
      .toContain("is the order ready?");

    const hidden = await callTool(client, "read_messages", {
      sessionId: other.body.data.sessionId,
      jid: contact,
    });
    expect(hidden.isError).toBe(true);
    expect(textOf(hidden)).toMatch(/^HTTP 404/);
    await client.close();
  });
});
