// A WhatsApp world for the MCP read suites: a session held by a fake bridge, whose chats, contacts and a
// group are reported as network events into the real SessionDO, so every answer comes from the real
// routes and the real store. What only WhatsApp knows the fake bridge answers when asked (answerWa).
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type ConnectedSession, connectedSession } from "../connected-session";
import { emit, type Link } from "../fake-bridge";
import { asKey } from "../helpers";
import { connect } from "./client";

export const ME = "628100000100@s.whatsapp.net";
export const ADA = "628100000101@s.whatsapp.net";
export const BOB = "628100000102@s.whatsapp.net";
export const CLUB = "120363000000000101@g.us";
export const NOBODY = "628100000199@s.whatsapp.net";
/** Ada's five messages, oldest first, one second apart, an hour ago. */
export const ADA_TEXTS = ["hi there", "about the invoice", "it is INV-2291", "due friday", "thanks!"];
export const START = Date.now() - 3_600_000;

export interface CompactMessage {
  id: string;
  chat: string;
  sender: string;
  fromMe: boolean;
  type: string;
  text: string | null;
  timestamp: string;
  [field: string]: unknown;
}

const message = (id: string, chat: string, sender: string, text: string, at: number) => ({
  kind: "message",
  live: true,
  message: {
    id,
    chat,
    sender,
    fromMe: sender === ME,
    pushName: sender === ADA ? "Ada" : sender === BOB ? "Bob" : undefined,
    timestamp: at,
    content: { type: "text", text },
  },
});

/** Reports the world to the SessionDO as the bridge would: Ada's chat, Bob's chat, a group and a message in it. */
export async function seedWorld(link: Link): Promise<void> {
  let seq = 2; // 1 was "connected"
  const next = (event: Record<string, unknown>) => emit(link, 1, seq++, event);
  for (const [i, text] of ADA_TEXTS.entries())
    await next(message(`ADA-${i}`, ADA, ADA, text, START + i * 1000));
  await next(message("BOB-0", BOB, BOB, "lunch tomorrow?", START + 10_000));
  await next({
    kind: "groups",
    action: "upsert",
    groups: [
      {
        jid: CLUB,
        subject: "Book club",
        participants: [
          { id: ME, admin: "superadmin" },
          { id: ADA, admin: null },
          { id: BOB, admin: null },
        ],
      },
    ],
  });
  await next(message("CLUB-0", CLUB, BOB, "next book: Dune", START + 20_000));
}

/**
 * A session whose fake bridge is still linked (connected-session.ts closes each test's bridges after
 * it), with the world reported, and a client with its owner's key: for what asks WhatsApp.
 */
export async function linkedWorld(name: string): Promise<{ session: ConnectedSession; client: Client }> {
  const session = await connectedSession(name, ME);
  await seedWorld(session.link);
  return { session, client: await connect(asKey(session.key)) };
}

/** The JSON of a resources/read answer's one text part. */
export function resourceJson(contents: ({ text: string } | { blob: string })[]): {
  messages: CompactMessage[];
} {
  const [first] = contents;
  if (!first || !("text" in first)) throw new Error(`not one text part: ${JSON.stringify(contents)}`);
  return JSON.parse(first.text) as { messages: CompactMessage[] };
}

/** Answers the next `wa` command of `op` the edge sends the bridge, as a bridge would; answers its args. */
export async function answerWa(link: Link, op: string, data: unknown): Promise<Record<string, unknown>> {
  const command = await link.next(
    (f) => f.type === "command" && f.name === "wa" && (f.args as { op?: string }).op === op,
  );
  link.send({ type: "result", epoch: 1, id: command.id, ok: true, data });
  return command.args as Record<string, unknown>;
}
