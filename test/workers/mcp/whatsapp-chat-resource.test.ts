// The chat resource chat://{sessionId}/{jid} over /mcp: a chat's latest messages from the real
// SessionDO (whatsapp-world.ts); another user's session is not found.
import { beforeAll, describe, expect, it } from "vitest";
import { type ConnectedSession, connectedSession } from "../connected-session";
import { newSession, owner } from "../gateway/webhooks/helpers";
import { asKey } from "../helpers";
import { connect } from "./client";
import { ADA, ADA_TEXTS, BOB, ME, NOBODY, resourceJson, seedWorld } from "./whatsapp-world";

describe("the chat resource chat://{sessionId}/{jid}", () => {
  let session: ConnectedSession;

  beforeAll(async () => {
    session = await connectedSession("Resource", ME);
    await seedWorld(session.link);
  });

  it("is listed as a template and reads the chat's recent messages, oldest first", async () => {
    const client = await connect(asKey(session.key));
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toContainEqual(
      expect.objectContaining({ uriTemplate: "chat://{sessionId}/{jid}", mimeType: "application/json" }),
    );
    const uri = `chat://${session.slug}/${ADA}`;
    const { contents } = await client.readResource({ uri });
    expect(contents).toHaveLength(1);
    expect(contents[0]?.uri).toBe(uri);
    expect(contents[0]?.mimeType).toBe("application/json");
    const body = resourceJson(contents);
    expect(body.messages.map((m) => m.text)).toEqual(ADA_TEXTS);
    // A percent-encoded jid names the same chat.
    const encoded = await client.readResource({ uri: `chat://${session.slug}/${encodeURIComponent(BOB)}` });
    expect(resourceJson(encoded.contents).messages.map((m) => m.text)).toEqual(["lunch tomorrow?"]);
    await client.close();
  });

  it("another user's session reads as not found; a bad jid is a clear error", async () => {
    const stranger = await owner();
    const strangers = await newSession(stranger.key);
    const client = await connect(asKey(stranger.key));
    await expect(client.readResource({ uri: `chat://${session.slug}/${ADA}` })).rejects.toThrow(
      /-32002[\s\S]*HTTP 404/,
    );
    await expect(client.readResource({ uri: `chat://${strangers.sessionId}/not-a-jid` })).rejects.toThrow(
      /HTTP 400[\s\S]*jid/,
    );
    await client.close();
    const own = await connect(asKey(session.key));
    const empty = await own.readResource({ uri: `chat://${session.slug}/${NOBODY}` });
    expect(resourceJson(empty.contents)).toEqual({ messages: [], nextCursor: null });
    await own.close();
  });
});
