// The send tools beyond text, each called for real on the line (as the owner's user key: what goes
// out, not the governance, which whatsapp-send.test.ts covers): media by URL, a reaction, a schedule.
import { describe, expect, it } from "vitest";
import { call } from "../helpers";
import { callTool, connect, jsonOf, textOf } from "./client";
import { linkedLine, personJid } from "./whatsapp-line";

describe("send_media, send_reaction and schedule_message", () => {
  it("send the media and the reaction the bridge is asked for, and store the schedule", async () => {
    const line = await linkedLine();
    const client = await connect(line.owner.headers);
    const contact = personJid();

    const media = await callTool(client, "send_media", {
      sessionId: line.session.slug,
      jid: contact,
      message: { image: { url: "https://media.example/cat.png" }, caption: "the cat" },
    });
    expect(media.isError, textOf(media)).toBeFalsy();
    const [sent] = line.sent(contact);
    expect(JSON.stringify(sent?.content)).toContain("https://media.example/cat.png");
    expect(JSON.stringify(sent?.content)).toContain("the cat");

    const messageId = jsonOf<{ data: { id: string } }>(media).data.id;
    // A later message in the same chat: the reaction must still point at the one named.
    const later = await callTool(client, "send_text", {
      sessionId: line.session.slug,
      jid: contact,
      text: "and another",
    });
    expect(later.isError, textOf(later)).toBeFalsy();
    expect(jsonOf<{ data: { id: string } }>(later).data.id).not.toBe(messageId);
    const reaction = await callTool(client, "send_reaction", {
      sessionId: line.session.slug,
      jid: contact,
      messageId,
      emoji: "👍",
    });
    expect(reaction.isError, textOf(reaction)).toBeFalsy();
    const reacts = line.session.link.frames
      .filter((f) => f.type === "command" && f.name === "wa" && (f.args as { op?: string }).op === "react")
      .map((f) => f.args);
    expect(reacts).toEqual([
      {
        op: "react",
        target: expect.objectContaining({ id: messageId, chat: contact, fromMe: true, sender: line.me }),
        emoji: "👍",
      },
    ]);

    const sendAt = new Date(Date.now() + 86_400_000).toISOString();
    const scheduled = jsonOf<{ data: { id: string; status: string } }>(
      await callTool(client, "schedule_message", {
        sessionId: line.session.slug,
        jid: contact,
        content: "see you tomorrow",
        sendAt,
      }),
    );
    expect(scheduled.data.status).toBe("PENDING");
    const stored = await call<{ data: { content: string; status: string } }>(
      "GET",
      `/api/scheduler/${line.session.slug}/${scheduled.data.id}`,
      { headers: line.owner.headers },
    );
    expect(stored.body.data).toMatchObject({ content: "see you tomorrow", status: "PENDING" });
    await client.close();
  });
});
