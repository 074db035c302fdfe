import { z } from "@hono/zod-openapi";
import { ChatListQuerySchema, CheckNumbersBodySchema, HistoryQuerySchema } from "../../gateway/chat-schemas";
import { GroupParamsSchema, type GroupSchema } from "../../gateway/groups";
import {
  ChatParamsSchema,
  type MessageResourceSchema,
  SearchQuerySchema,
  SessionParamSchema,
} from "../../gateway/messages";
import type { SessionSchema } from "../../gateway/sessions";
import { type AnyToolDefinition, defineBareTool, defineTool, type ToolContext } from "./registry";
import { type RestAnswer, type RestCall, toolResultOf } from "./rest";
import { whatsappCall } from "./whatsapp-access";
import { compactGroup, compactMessages, compactSession, type Envelope, groupSummary } from "./whatsapp-views";

type Message = z.infer<typeof MessageResourceSchema>;
type Group = z.infer<typeof GroupSchema>;

/** What every WhatsApp tool's description says about the two ids it takes and about refusals. */
const SESSION_AND_JID =
  "sessionId is a session's sessionId or id from list_sessions. A jid names a chat: a person is " +
  "<country code and number, digits only>@s.whatsapp.net (e.g. 628123456789@s.whatsapp.net), or " +
  "<digits>@lid when WhatsApp hides the number; a group is <digits>@g.us. Take jids from list_chats, " +
  "list_groups or check_numbers rather than guessing.";
const REFUSALS =
  "HTTP 404 means the session does not exist or is not yours (nor shared with you): check list_sessions; " +
  "HTTP 503 means the session is not connected to WhatsApp right now.";

/** `/api` path pieces: ids are encoded, since a jid carries `@` and a group jid may carry `-`. */
const segment = encodeURIComponent;

/** A query string of the given parameters, the absent ones left out. */
function queryOf(params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, String(value));
  const text = query.toString();
  return text === "" ? "" : `?${text}`;
}

/** Runs `call` through the one WhatsApp door; a success's body becomes `shape(body)`, a refusal stays. */
async function shapedCall<T>(ctx: ToolContext, call: RestCall, shape: (body: Envelope<T>) => unknown) {
  const answer = await whatsappCall(ctx, call);
  const ok = answer.status >= 200 && answer.status < 300;
  return ok ? { status: answer.status, body: shape(answer.body as Envelope<T>) } : answer;
}

/** The tool result of `shapedCall`: the shaped JSON, or the API's error as a tool error. */
const read = async <T>(ctx: ToolContext, call: RestCall, shape: (body: Envelope<T>) => unknown) =>
  toolResultOf(await shapedCall(ctx, call, shape));

/**
 * One page of a chat's history, newest page first, made compact: `{messages, nextCursor}`. What
 * read_messages answers, and the chat resource (resources/chat.ts) too.
 */
export function chatHistory(
  ctx: ToolContext,
  page: { sessionId: string; jid: string; limit: number; before?: string },
): Promise<RestAnswer> {
  const { sessionId, jid, limit, before } = page;
  return shapedCall<Message[]>(
    ctx,
    { method: "GET", path: `/chat/${segment(sessionId)}/${segment(jid)}${queryOf({ limit, before })}` },
    (body) => ({
      messages: compactMessages(body.data),
      nextCursor: (body.pagination?.nextCursor as string | null | undefined) ?? null,
    }),
  );
}

// The routes' own fields; the descriptions are for the model (the routes' `.openapi()` texts do not
// reach a tool's JSON Schema).
const sessionId = SessionParamSchema.shape.sessionId.describe(
  "The session's sessionId or id (list_sessions)",
);
const SessionInput = z.strictObject({ sessionId });
const ListChatsInput = SessionInput.extend(ChatListQuerySchema.shape);
const ReadMessagesInput = SessionInput.extend({
  jid: ChatParamsSchema.shape.jid.describe(
    "The chat: <number>@s.whatsapp.net, <digits>@lid or <digits>@g.us",
  ),
  limit: HistoryQuerySchema.shape.limit,
  before: HistoryQuerySchema.shape.before.describe("nextCursor of the previous page; omit for the newest"),
});
const SearchInput = SessionInput.extend(SearchQuerySchema.shape);
const CheckNumbersInput = SessionInput.extend(CheckNumbersBodySchema.shape);
const GroupInput = SessionInput.extend({
  jid: GroupParamsSchema.shape.jid.describe("The group's jid, <digits>@g.us (list_groups)"),
});

const readOnly = { readOnlyHint: true, openWorldHint: true } as const;

/** The WhatsApp tools that read and change nothing; each is one gateway route called as the caller. */
export const whatsappReadTools: AnyToolDefinition[] = [
  defineBareTool({
    name: "list_sessions",
    domain: "whatsapp",
    scope: "read",
    description:
      "The WhatsApp sessions (linked WhatsApp accounts) you may use: your own and those shared with you. Each " +
      "has id and sessionId (either one is the sessionId the other WhatsApp tools take), name, status " +
      "(Connected, Disconnected, …), state (connected, qr, stopped, …) and me, the account's own jid. Call " +
      "this first; a session must be connected for check_numbers and get_group.",
    annotations: readOnly,
    run: (ctx) =>
      read<z.infer<typeof SessionSchema>[]>(ctx, { method: "GET", path: "/sessions" }, (body) => ({
        sessions: body.data.map(compactSession),
      })),
  }),
  defineTool({
    name: "list_chats",
    domain: "whatsapp",
    scope: "read",
    description:
      "A session's chats (people and groups), pinned first, then by most recent message: jid, name, isGroup, " +
      "unreadCount, archived, pinned, mutedUntil and the last message's text. Pages: limit (default 50) and " +
      "offset; nextOffset is the offset to ask for next, null when this page was not full (nothing more). " +
      `${SESSION_AND_JID} ${REFUSALS}`,
    inputSchema: ListChatsInput,
    annotations: readOnly,
    run: (ctx, { sessionId, limit, offset }) =>
      read<unknown[]>(
        ctx,
        { method: "GET", path: `/chat/${segment(sessionId)}${queryOf({ limit, offset })}` },
        (body) => ({ chats: body.data, nextOffset: body.data.length === limit ? offset + limit : null }),
      ),
  }),
  defineTool({
    name: "read_messages",
    domain: "whatsapp",
    scope: "read",
    description:
      "Read a chat's messages, newest page first, each page oldest → newest (default and most: 100). For " +
      "older messages call again with before = the nextCursor you got; nextCursor null means there is " +
      "nothing older. A chat nobody wrote in answers no messages. Each message: id (what replies and " +
      "reactions take), chat, sender, fromMe, pushName, type (TEXT, IMAGE, POLL, …), text (the body, " +
      "caption, poll question or place name), timestamp, and when present status, quotedId, mediaUrl, " +
      "poll options, location coordinates, reactions, editedAt, deletedAt. The raw protocol content " +
      `(media details, vCards, mentions) is left out. ${SESSION_AND_JID} ${REFUSALS}`,
    inputSchema: ReadMessagesInput,
    annotations: readOnly,
    run: async (ctx, page) => toolResultOf(await chatHistory(ctx, page)),
  }),
  defineTool({
    name: "search_messages",
    domain: "whatsapp",
    scope: "read",
    description:
      "Search a session's stored messages, newest first: q is text to find (case-insensitive), jid limits it " +
      'to one chat (q or jid is required), type to one kind (TEXT, IMAGE, …), fromMe to "true" (sent) or ' +
      '"false" (received). Pages: page (from 1) and limit (default 20); the answer has total, page and pages. ' +
      `Messages are compact as in read_messages. ${SESSION_AND_JID} ${REFUSALS}`,
    inputSchema: SearchInput,
    annotations: readOnly,
    run: (ctx, { sessionId, ...query }) =>
      read<Message[]>(
        ctx,
        { method: "GET", path: `/messages/${segment(sessionId)}/search${queryOf(query)}` },
        (body) => ({ messages: compactMessages(body.data), ...body.pagination }),
      ),
  }),
  defineTool({
    name: "check_numbers",
    domain: "whatsapp",
    scope: "read",
    description:
      "Which phone numbers have WhatsApp (up to 50, one lookup; sends nothing to anyone). Plain numbers are " +
      "accepted in any common notation with the country code (+62 812-3456-789, 628123456789). One result " +
      "per number, in order: exists, and jid, the chat address to use with the other tools (null when not " +
      `on WhatsApp); an unparseable number has error. Needs the session connected. ${REFUSALS}`,
    inputSchema: CheckNumbersInput,
    annotations: readOnly,
    run: (ctx, { sessionId, numbers }) =>
      read<unknown>(
        ctx,
        { method: "POST", path: `/chat/${segment(sessionId)}/check`, body: { numbers } },
        (body) => body.data,
      ),
  }),
  defineTool({
    name: "list_groups",
    domain: "whatsapp",
    scope: "read",
    description:
      "The WhatsApp groups the session's account is in, by subject: jid, subject, description, owner, size " +
      "(member count), announce (only admins send), restrict, isCommunity, creation. Members are left out " +
      `here (a group can have hundreds): get_group lists them. ${SESSION_AND_JID} ${REFUSALS}`,
    inputSchema: SessionInput,
    annotations: readOnly,
    run: (ctx, { sessionId }) =>
      read<Group[]>(ctx, { method: "GET", path: `/groups/${segment(sessionId)}` }, (body) => ({
        groups: body.data.map(groupSummary),
      })),
  }),
  defineTool({
    name: "get_group",
    domain: "whatsapp",
    scope: "read",
    description:
      "One group as WhatsApp has it now, with its members: participants (id = the member's jid, admin = " +
      "admin, superadmin or null), subject, description, owner, size, settings and pictureUrl. jid must be a " +
      `group jid (<digits>@g.us). Needs the session connected. HTTP 404 also means the account is not in ` +
      `that group. ${REFUSALS}`,
    inputSchema: GroupInput,
    annotations: readOnly,
    run: (ctx, { sessionId, jid }) =>
      read<Group>(ctx, { method: "GET", path: `/groups/${segment(sessionId)}/${segment(jid)}` }, (body) =>
        compactGroup(body.data),
      ),
  }),
];
