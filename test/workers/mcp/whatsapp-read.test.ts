// The WhatsApp read tools over /mcp, driven by the official SDK client against a session whose world
// (whatsapp-world.ts) is in the real SessionDO: content, paging, search, number checks, groups, who may
// read (owner, shared viewer; another user 404; an agent refused) and bad arguments.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectedSession, connectedSession } from "../connected-session";
import { seedTenant } from "../control/helpers";
import { owner } from "../gateway/webhooks/helpers";
import { asKey, call } from "../helpers";
import { callTool, connect, jsonOf, textOf } from "./client";
import {
  ADA,
  answerWa,
  BOB,
  CLUB,
  type CompactMessage,
  linkedWorld,
  ME,
  START,
  seedWorld,
} from "./whatsapp-world";

describe("WhatsApp read tools over /mcp", () => {
  let session: ConnectedSession;
  let mine: Client;

  beforeAll(async () => {
    session = await connectedSession("Reads", ME);
    await seedWorld(session.link);
    mine = await connect(asKey(session.key));
  });

  afterAll(async () => {
    await mine?.close();
  });

  it("lists the read tools, their inputs taken from the routes' schemas", async () => {
    const { tools } = await mine.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of [
      "list_sessions",
      "list_chats",
      "read_messages",
      "search_messages",
      "check_numbers",
      "list_groups",
      "get_group",
    ]) {
      expect(byName.get(name)?.annotations?.readOnlyHint, name).toBe(true);
      expect(byName.get(name)?.description?.length ?? 0, name).toBeGreaterThan(80);
    }
    const read = byName.get("read_messages")?.inputSchema;
    expect(read?.required).toEqual(["sessionId", "jid"]);
    expect(Object.keys(read?.properties ?? {}).sort()).toEqual(["before", "jid", "limit", "sessionId"]);
    expect(Object.keys(byName.get("search_messages")?.inputSchema.properties ?? {}).sort()).toEqual([
      "fromMe",
      "jid",
      "limit",
      "page",
      "q",
      "sessionId",
      "type",
    ]);
    expect(byName.get("check_numbers")?.inputSchema.required).toEqual(["sessionId", "numbers"]);
    expect(byName.get("get_group")?.inputSchema.required).toEqual(["sessionId", "jid"]);
  });

  it("list_sessions shows the caller's session with its state and account, nothing more", async () => {
    const { sessions } = jsonOf<{ sessions: Record<string, unknown>[] }>(
      await callTool(mine, "list_sessions"),
    );
    expect(sessions).toEqual([
      {
        id: session.id,
        sessionId: session.slug,
        name: "Reads",
        status: "Connected",
        state: "connected",
        me: { id: ME },
      },
    ]);
  });

  it("list_chats shows the world's chats with their last message", async () => {
    const { chats, nextOffset } = jsonOf<{
      chats: { jid: string; isGroup: boolean; lastMessage: { content: string } | null }[];
      nextOffset: number | null;
    }>(await callTool(mine, "list_chats", { sessionId: session.slug }));
    expect(chats.map((chat) => [chat.jid, chat.isGroup, chat.lastMessage?.content])).toEqual([
      [CLUB, true, "next book: Dune"],
      [BOB, false, "lunch tomorrow?"],
      [ADA, false, "thanks!"],
    ]);
    expect(nextOffset).toBeNull();
    const firstTwo = jsonOf<{ chats: { jid: string }[]; nextOffset: number | null }>(
      await callTool(mine, "list_chats", { sessionId: session.slug, limit: 2 }),
    );
    expect(firstTwo.chats.map((chat) => chat.jid)).toEqual([CLUB, BOB]);
    expect(firstTwo.nextOffset).toBe(2);
    const rest = jsonOf<{ chats: { jid: string }[] }>(
      await callTool(mine, "list_chats", { sessionId: session.slug, limit: 2, offset: 2 }),
    );
    expect(rest.chats.map((chat) => chat.jid)).toEqual([ADA]);
  });

  it("read_messages pages back through a chat: the newest page first, nextCursor gives the older one", async () => {
    const first = jsonOf<{ messages: CompactMessage[]; nextCursor: string | null }>(
      await callTool(mine, "read_messages", { sessionId: session.slug, jid: ADA, limit: 3 }),
    );
    expect(first.messages.map((m) => m.text)).toEqual(["it is INV-2291", "due friday", "thanks!"]);
    expect(first.messages[0]).toEqual({
      id: "ADA-2",
      chat: ADA,
      sender: ADA,
      fromMe: false,
      pushName: "Ada",
      type: "TEXT",
      text: "it is INV-2291",
      timestamp: new Date(START + 2000).toISOString(),
    });
    expect(first.nextCursor).toEqual(expect.any(String));

    const older = jsonOf<{ messages: CompactMessage[]; nextCursor: string | null }>(
      await callTool(mine, "read_messages", {
        sessionId: session.id,
        jid: ADA,
        limit: 3,
        before: first.nextCursor,
      }),
    );
    expect(older.messages.map((m) => m.id)).toEqual(["ADA-0", "ADA-1"]);
    expect(older.nextCursor).toBeNull();
  });

  it("search_messages finds a message by its text, across chats or in one", async () => {
    const found = jsonOf<{ messages: CompactMessage[]; total: number; page: number; pages: number }>(
      await callTool(mine, "search_messages", { sessionId: session.slug, q: "INV-2291" }),
    );
    expect(found.total).toBe(1);
    expect(found.messages.map((m) => [m.id, m.chat, m.text])).toEqual([["ADA-2", ADA, "it is INV-2291"]]);
    const inBob = jsonOf<{ total: number }>(
      await callTool(mine, "search_messages", { sessionId: session.slug, q: "INV-2291", jid: BOB }),
    );
    expect(inBob.total).toBe(0);
    const neither = await callTool(mine, "search_messages", { sessionId: session.slug });
    expect(neither.isError).toBe(true);
    expect(textOf(neither)).toContain("q or jid is required");
  });

  it("check_numbers asks WhatsApp once and answers per number, plain numbers accepted", async () => {
    const { session, client } = await linkedWorld("Checks");
    const pending = callTool(client, "check_numbers", {
      sessionId: session.slug,
      numbers: ["+62 8100-000-101", "628100000199", "not a number"],
    });
    const asked = await answerWa(session.link, "numbers.check", [
      { number: "628100000101", exists: true, jid: ADA },
      { number: "628100000199", exists: false, jid: null },
    ]);
    expect(asked.numbers).toEqual(["628100000101", "628100000199"]);
    const { results } = jsonOf<{ results: unknown[] }>(await pending);
    expect(results).toEqual([
      { number: "+62 8100-000-101", exists: true, jid: ADA },
      { number: "628100000199", exists: false, jid: null },
      { number: "not a number", exists: false, jid: null, error: "Invalid number format" },
    ]);
    await client.close();
  });

  it("list_groups shows the group without its members; get_group has the members", async () => {
    const { groups } = jsonOf<{ groups: Record<string, unknown>[] }>(
      await callTool(mine, "list_groups", { sessionId: session.slug }),
    );
    expect(groups).toEqual([expect.objectContaining({ jid: CLUB, subject: "Book club", size: 3 })]);
    expect(groups[0]).not.toHaveProperty("participants");

    const { session: linked, client } = await linkedWorld("Groups");
    const pending = callTool(client, "get_group", { sessionId: linked.slug, jid: CLUB });
    await answerWa(linked.link, "group.metadata", {
      jid: CLUB,
      subject: "Book club",
      description: "Monthly reads",
      participants: [
        { id: ME, admin: "superadmin" },
        { id: ADA, admin: "admin" },
        { id: BOB, admin: null },
      ],
    });
    await answerWa(linked.link, "profile.picture.url", { url: null });
    const group = jsonOf<Record<string, unknown>>(await pending);
    expect(group).toMatchObject({
      jid: CLUB,
      subject: "Book club",
      description: "Monthly reads",
      size: 3,
      participants: [
        { id: ME, admin: "superadmin" },
        { id: ADA, admin: "admin" },
        { id: BOB, admin: null },
      ],
      pictureUrl: null,
    });
    expect(group).not.toHaveProperty("desc");
    await client.close();
  });

  it("a viewer the session is shared with reads it; another user gets 404 and sees no session", async () => {
    const viewer = await owner("STAFF");
    const shared = await call("POST", `/api/sessions/${session.slug}/access`, {
      headers: asKey(session.key),
      body: { email: viewer.email, role: "viewer" },
    });
    expect(shared.status, JSON.stringify(shared.body)).toBe(201);
    const asViewer = await connect(asKey(viewer.key));
    const { sessions } = jsonOf<{ sessions: { sessionId: string }[] }>(
      await callTool(asViewer, "list_sessions"),
    );
    expect(sessions.map((s) => s.sessionId)).toEqual([session.slug]);
    const read = jsonOf<{ messages: CompactMessage[] }>(
      await callTool(asViewer, "read_messages", { sessionId: session.slug, jid: BOB }),
    );
    expect(read.messages.map((m) => m.text)).toEqual(["lunch tomorrow?"]);
    await asViewer.close();

    const stranger = await owner();
    const asStranger = await connect(asKey(stranger.key));
    expect(jsonOf(await callTool(asStranger, "list_sessions"))).toEqual({ sessions: [] });
    for (const [tool, args] of [
      ["list_chats", { sessionId: session.slug }],
      ["read_messages", { sessionId: session.slug, jid: ADA }],
      ["search_messages", { sessionId: session.id, q: "invoice" }],
      ["list_groups", { sessionId: session.slug }],
      ["get_group", { sessionId: session.slug, jid: CLUB }],
      ["check_numbers", { sessionId: session.slug, numbers: ["628100000101"] }],
    ] as const) {
      const refused = await callTool(asStranger, tool, args);
      expect(refused.isError, tool).toBe(true);
      expect(textOf(refused), tool).toMatch(/^HTTP 404/);
      expect(textOf(refused), tool).not.toContain("INV-2291");
    }
    await asStranger.close();
  });

  it("bad arguments are a clear error naming the field, before any route runs", async () => {
    const { session, client } = await linkedWorld("Bad arguments");
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [
        "read_messages",
        { sessionId: session.slug, jid: "628100000101" },
        /must be <number>@s\.whatsapp\.net.* at jid/,
      ],
      ["read_messages", { sessionId: session.slug, jid: ADA, limit: 0 }, /limit/],
      ["read_messages", { sessionId: session.slug, jid: ADA, before: "yesterday" }, /before/],
      ["read_messages", { sessionId: session.slug, jid: ADA, page: 2 }, /page/],
      ["get_group", { sessionId: session.slug, jid: ADA }, /@g\.us/],
      ["check_numbers", { sessionId: session.slug, numbers: [] }, /numbers/],
      ["list_chats", {}, /sessionId/],
    ];
    for (const [tool, args, problem] of cases) {
      const result = await callTool(client, tool, args);
      expect(result.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(textOf(result)).toContain("Input validation error");
      expect(textOf(result)).toMatch(problem);
    }
    // Nothing reached WhatsApp: the link carried no command (check_numbers' empty list included).
    expect(session.link.frames.filter((f) => f.type === "command")).toEqual([]);
    await client.close();
  });

  it("an agent key whose company has no line is refused, and names the line it needs", async () => {
    const { agent } = await seedTenant();
    const asAgent = await connect(agent.headers);
    for (const [tool, args] of [
      ["list_sessions", {}],
      ["read_messages", { sessionId: session.slug, jid: ADA }],
    ] as const) {
      const refused = await callTool(asAgent, tool, args);
      expect(refused.isError, tool).toBe(true);
      expect(textOf(refused), tool).toMatch(/^HTTP 409: This company has no WhatsApp line/);
    }
    await asAgent.close();
  });
});
