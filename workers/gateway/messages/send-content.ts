import { z } from "@hono/zod-openapi";
import { type OutgoingContent, PersonJidSchema, VCardSchema } from "../../../bridge/src/protocol/messaging";
import { documentMimetype, fileNameFromUrl } from "../../../durable-objects/messaging/media/from-url";

/**
 * The `message` object of the send endpoints, as the spec and the reference accept it, and its
 * translation to the wire content the bridge sends. `text` next to media becomes the caption, as in
 * the reference.
 */
const url = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .openapi({ example: "https://example.com/cat.jpg" });
const media = z.strictObject({ url });
const caption = z.string().max(4096).optional();
const text = z.string().min(1).max(65_536).optional();

const TextMessage = z.strictObject({ text: z.string().min(1).max(65_536) });
const ImageMessage = z.strictObject({ image: media, caption, text });
const VideoMessage = z.strictObject({ video: media, caption, text, gifPlayback: z.boolean().optional() });
const AudioMessage = z.strictObject({ audio: media, ptt: z.boolean().optional() });
const VoiceMessage = z.strictObject({ voice: media });
const DocumentMessage = z.strictObject({
  document: media,
  fileName: z.string().min(1).max(256).optional(),
  mimetype: z.string().min(3).max(128).optional(),
  caption,
  text,
});
const StickerMessage = z.strictObject({
  sticker: z.union([
    url,
    z.strictObject({ url, pack: z.string().max(128).optional(), author: z.string().max(128).optional() }),
  ]),
});

export const MessageInputSchema = z
  .union([
    TextMessage,
    ImageMessage,
    VideoMessage,
    AudioMessage,
    VoiceMessage,
    DocumentMessage,
    StickerMessage,
  ])
  .openapi("MessageInput", {
    description:
      "One of: {text}; {image:{url}, caption?}; {video:{url}, caption?, gifPlayback?}; {audio:{url}, ptt?}; " +
      "{voice:{url}} (a voice note); {document:{url}, fileName?, mimetype?, caption?}; " +
      "{sticker: url | {url, pack?, author?}} (converted to WebP). `text` next to media is its caption.",
  });
export type MessageInput = z.infer<typeof MessageInputSchema>;

export const MentionsSchema = z
  .array(PersonJidSchema)
  .max(1024)
  .optional()
  .openapi({ description: "Person JIDs to mention (group messages)" });

export const SendBodySchema = z
  .strictObject({
    message: MessageInputSchema,
    mentions: MentionsSchema,
    quotedMessageId: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .openapi({ description: "Reply to this message (same chat)" }),
  })
  .openapi("SendMessageBody");

export const PollBodyShape = {
  question: z.string().min(1).max(256),
  options: z.array(z.string().min(1).max(100)).min(2).max(12),
  selectableCount: z.number().int().min(1).max(12).optional(),
};

/** Poll rules beyond single fields: options distinct, selectableCount within the options. */
export function checkPoll(
  body: { options: string[]; selectableCount?: number | undefined },
  ctx: z.RefinementCtx,
) {
  if ((body.selectableCount ?? 1) > body.options.length)
    ctx.addIssue({
      code: "custom",
      message: "selectableCount cannot exceed the number of options",
      path: ["selectableCount"],
    });
  if (new Set(body.options).size !== body.options.length)
    ctx.addIssue({ code: "custom", message: "options must be distinct", path: ["options"] });
}

export const PollBodySchema = z.strictObject(PollBodyShape).superRefine(checkPoll);

export const LocationBodyShape = {
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
  name: z.string().max(256).optional(),
  address: z.string().max(512).optional(),
};

export const ContactBodyShape = { contacts: z.array(VCardSchema.strict()).min(1).max(50) };

export function toOutgoingContent(input: MessageInput, mentions?: string[]): OutgoingContent {
  const withMentions = mentions && mentions.length > 0 ? { mentions } : {};
  if ("image" in input) {
    const cap = input.caption ?? input.text;
    return { type: "image", media: input.image, ...(cap ? { caption: cap } : {}), ...withMentions };
  }
  if ("video" in input) {
    const cap = input.caption ?? input.text;
    return { type: "video", media: input.video, ...(cap ? { caption: cap } : {}), ...withMentions };
  }
  if ("audio" in input) return { type: "audio", media: input.audio, ptt: input.ptt ?? false };
  if ("voice" in input) return { type: "audio", media: input.voice, ptt: true };
  if ("document" in input) {
    const cap = input.caption ?? input.text;
    const fileName = input.fileName ?? fileNameFromUrl(input.document.url);
    return {
      type: "document",
      media: input.document,
      fileName,
      mimetype: input.mimetype ?? documentMimetype(fileName),
      ...(cap ? { caption: cap } : {}),
    };
  }
  if ("sticker" in input) {
    const sticker = typeof input.sticker === "string" ? { url: input.sticker } : input.sticker;
    return {
      type: "sticker",
      media: { url: sticker.url },
      ...(sticker.pack ? { pack: sticker.pack } : {}),
      ...(sticker.author ? { author: sticker.author } : {}),
    };
  }
  return { type: "text", text: input.text, ...withMentions };
}

export function pollContent(body: {
  question: string;
  options: string[];
  selectableCount?: number | undefined;
}) {
  return {
    type: "poll",
    question: body.question,
    options: body.options,
    selectableCount: body.selectableCount ?? 1,
  } as const satisfies OutgoingContent;
}

export function locationContent(body: {
  latitude: number;
  longitude: number;
  name?: string | undefined;
  address?: string | undefined;
}): OutgoingContent {
  return {
    type: "location",
    latitude: body.latitude,
    longitude: body.longitude,
    ...(body.name ? { name: body.name } : {}),
    ...(body.address ? { address: body.address } : {}),
  };
}
