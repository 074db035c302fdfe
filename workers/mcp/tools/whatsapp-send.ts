import { z } from "@hono/zod-openapi";
import {
  ChatParamsSchema,
  checkPoll,
  LocationBodyShape,
  MessageParamsSchema,
  PollBodyShape,
  ReactBodySchema,
  SendBodySchema,
  SessionParamSchema,
} from "../../gateway/messages";
import { CreateBodySchema } from "../../gateway/scheduler-schemas";
import type { AnyToolDefinition } from "./registry";
import { defineSendTool, type SendSpec } from "./send-governance";

/**
 * The WhatsApp send tools. Inputs are the gateway routes' own schemas (path parameters merged with
 * the body); each is one REST call, governed for agents (send-governance.ts).
 */

const chatPath = (args: { sessionId: string; jid: string }) =>
  `/messages/${encodeURIComponent(args.sessionId)}/${encodeURIComponent(args.jid)}`;

const ON_REFUSAL =
  "Agents send on their company's line under the board's policy: an answer `pending approval <id>` means " +
  "the board must approve it first (it is then sent once; do not send it again); an HTTP 403 means the " +
  "board turned the tool off, HTTP 429 that your daily cap is used up (retry after the reset it names).";

const SendTextInput = z.strictObject({
  ...ChatParamsSchema.shape,
  text: z.string().min(1).max(65_536).describe("The message text (WhatsApp formatting: *bold*, _italic_)"),
  mentions: SendBodySchema.shape.mentions,
  quotedMessageId: SendBodySchema.shape.quotedMessageId,
});
const SendMediaInput = z.strictObject({ ...ChatParamsSchema.shape, ...SendBodySchema.shape });
const LocationInput = z.strictObject({ ...ChatParamsSchema.shape, ...LocationBodyShape });
const PollInput = z.strictObject({ ...ChatParamsSchema.shape, ...PollBodyShape }).superRefine(checkPoll);
const ReactionInput = z.strictObject({ ...MessageParamsSchema.shape, ...ReactBodySchema.shape });
const ScheduleInput = z.strictObject({ ...SessionParamSchema.shape, ...CreateBodySchema.shape });

const specs = [
  {
    name: "send_text",
    description:
      "Send a WhatsApp text message to one chat (`jid`: `<number>@s.whatsapp.net`, `<digits>@lid` or a " +
      "group `…@g.us`) on a session, optionally quoting a message. Returns the sent message (its `id`). " +
      ON_REFUSAL,
    inputSchema: SendTextInput,
    call: ({ text, mentions, quotedMessageId, ...chat }: z.infer<typeof SendTextInput>) => ({
      method: "POST",
      path: `${chatPath(chat)}/send`,
      body: { message: { text }, mentions, quotedMessageId },
    }),
    recipient: (args: z.infer<typeof SendTextInput>) => args.jid,
  } satisfies SendSpec<typeof SendTextInput>,
  {
    name: "send_media",
    description:
      "Send media by URL to one chat: `message` is {image:{url}, caption?}, {video:{url}, caption?}, " +
      "{audio:{url}, ptt?}, {voice:{url}}, {document:{url}, fileName?, mimetype?, caption?} or " +
      "{sticker: url}. The server downloads the URL. Returns the sent message. " +
      ON_REFUSAL,
    inputSchema: SendMediaInput,
    call: ({ sessionId, jid, ...body }: z.infer<typeof SendMediaInput>) => ({
      method: "POST",
      path: `${chatPath({ sessionId, jid })}/send`,
      body,
    }),
    recipient: (args: z.infer<typeof SendMediaInput>) => args.jid,
  } satisfies SendSpec<typeof SendMediaInput>,
  {
    name: "send_location",
    description: `Send a location pin (latitude, longitude, optional name and address) to one chat. ${ON_REFUSAL}`,
    inputSchema: LocationInput,
    call: ({ sessionId, jid, ...body }: z.infer<typeof LocationInput>) => ({
      method: "POST",
      path: `${chatPath({ sessionId, jid })}/location`,
      body,
    }),
    recipient: (args: z.infer<typeof LocationInput>) => args.jid,
  } satisfies SendSpec<typeof LocationInput>,
  {
    name: "send_poll",
    description:
      "Send a poll to one chat: a question and 2–12 distinct options; selectableCount (default 1) is how " +
      `many options a voter may pick. ${ON_REFUSAL}`,
    inputSchema: PollInput,
    call: ({ sessionId, jid, ...body }: z.infer<typeof PollInput>) => ({
      method: "POST",
      path: `${chatPath({ sessionId, jid })}/poll`,
      body,
    }),
    recipient: (args: z.infer<typeof PollInput>) => args.jid,
  } satisfies SendSpec<typeof PollInput>,
  {
    name: "send_reaction",
    description:
      "React to a message of a chat with an emoji (an empty string removes your reaction). `messageId` " +
      `is the message's id from a chat's messages. ${ON_REFUSAL}`,
    inputSchema: ReactionInput,
    call: ({ sessionId, jid, messageId, emoji }: z.infer<typeof ReactionInput>) => ({
      method: "POST",
      path: `${chatPath({ sessionId, jid })}/${encodeURIComponent(messageId)}/react`,
      body: { emoji },
    }),
    recipient: (args: z.infer<typeof ReactionInput>) => args.jid,
  } satisfies SendSpec<typeof ReactionInput>,
  {
    name: "schedule_message",
    description:
      "Schedule a message (text in `content`, or media by `mediaUrl` with `content` as caption) for " +
      "`sendAt` (ISO 8601; without an offset it is local time in `timezone`), once or on a 5-field " +
      "cronExpression. Returns the scheduled message (its id, status PENDING). For an agent the board's " +
      "policy applies now, and the daily cap and pacing when it is sent: a message the cap refuses on its " +
      "day is not sent: it becomes FAILED with the reason in `lastError`, and the activity log says so. " +
      ON_REFUSAL,
    inputSchema: ScheduleInput,
    call: ({ sessionId, ...body }: z.infer<typeof ScheduleInput>) => ({
      method: "POST",
      path: `/scheduler/${encodeURIComponent(sessionId)}`,
      body,
    }),
    recipient: (args: z.infer<typeof ScheduleInput>) => args.jid,
    sendsLater: true,
  } satisfies SendSpec<typeof ScheduleInput>,
] as const;

/** Each send tool's spec by name: an approved held send is rebuilt from it (send-approval.ts). */
export const SEND_SPECS: ReadonlyMap<string, SendSpec> = new Map(
  specs.map((spec) => [spec.name, spec as unknown as SendSpec]),
);

export const whatsappSendTools: AnyToolDefinition[] = specs.map((spec) =>
  defineSendTool(spec as unknown as SendSpec),
);
