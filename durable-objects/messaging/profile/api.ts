import { type OutgoingContent, STATUS_JID } from "../../../bridge/src/protocol/messaging";
import { type Profile, ProfileSchema } from "../../../bridge/src/protocol/operations";
import { statusAudience } from "../contacts/store";
import { failure, type Outcome, type SessionContext, success } from "../context";
import { deleteUpload, storeUpload } from "../media/store";
import { sendMessage } from "../messages/send";
import type { MessageResource } from "../messages/view";

/** The account's profile (name, about, picture), pictures of groups it administers, and status posts. */

export interface PictureUpload {
  bytes: Uint8Array;
  mimetype: string;
  fileName: string;
}

export interface StatusPost {
  /** The text of a TEXT post, the caption of an IMAGE or VIDEO one. */
  content: string;
  type: "TEXT" | "IMAGE" | "VIDEO";
  mediaUrl?: string;
  backgroundColor?: string;
  font?: number;
  /** Who may see the post (WhatsApp's status audience); absent: the session's contacts. */
  mentions?: string[];
}

const NO_AUDIENCE =
  "No one would see this status: the session has no phone-number contacts yet (they come from " +
  "WhatsApp as people write or sync); pass `mentions` with the JIDs who may see it";

const notConnected = () => failure(503, "Session not ready: WhatsApp is not connected");

async function pictureUrlOf(ctx: SessionContext, jid: string): Promise<string | null> {
  const result = await ctx.wa({ op: "profile.picture.url", jid });
  const url = result.ok ? (result.data as { url?: unknown } | null)?.url : null;
  return typeof url === "string" ? url : null;
}

async function readProfile(ctx: SessionContext): Promise<Outcome<Profile>> {
  const result = await ctx.wa({ op: "profile.get" });
  if (!result.ok) return result;
  const parsed = ProfileSchema.safeParse(result.data);
  return parsed.success ? success(parsed.data) : failure(500, "The bridge answered outside the protocol");
}

/**
 * Sets the account's picture (`jid` omitted) or a group's. The bytes wait in the object's media store
 * only while the bridge fetches them; a refused picture leaves nothing behind.
 */
export async function setPicture(
  ctx: SessionContext,
  jid: string | undefined,
  upload: PictureUpload,
): Promise<Outcome<{ pictureUrl: string | null }>> {
  if (!ctx.isConnected()) return notConnected();
  const ref = await storeUpload(ctx, upload.bytes, upload.mimetype, upload.fileName);
  try {
    const result = await ctx.wa({ op: "picture.set", ...(jid ? { jid } : {}), source: { upload: ref } });
    if (!result.ok) return result;
  } finally {
    await deleteUpload(ctx, ref);
  }
  if (jid) return success({ pictureUrl: await pictureUrlOf(ctx, jid) });
  const profile = await readProfile(ctx);
  return success({ pictureUrl: profile.ok ? profile.data.pictureUrl : null });
}

export async function removePicture(ctx: SessionContext, jid: string | undefined): Promise<Outcome> {
  const result = await ctx.wa({ op: "picture.remove", ...(jid ? { jid } : {}) });
  return result.ok ? success(null) : result;
}

function statusContent(post: StatusPost): OutgoingContent | null {
  if (post.type === "TEXT") return { type: "text", text: post.content };
  if (!post.mediaUrl) return null;
  return {
    type: post.type === "IMAGE" ? "image" : "video",
    media: { url: post.mediaUrl },
    ...(post.content ? { caption: post.content } : {}),
  };
}

export const profileApi = {
  "profile.get": (ctx: SessionContext, _input: Record<string, never>): Promise<Outcome<Profile>> =>
    readProfile(ctx),

  "profile.name": async (
    ctx: SessionContext,
    input: { name: string },
  ): Promise<Outcome<{ name: string }>> => {
    const result = await ctx.wa({ op: "profile.name", name: input.name });
    return result.ok ? success({ name: input.name }) : result;
  },

  "profile.status": async (
    ctx: SessionContext,
    input: { status: string },
  ): Promise<Outcome<{ status: string }>> => {
    const result = await ctx.wa({ op: "profile.status", status: input.status });
    return result.ok ? success({ status: input.status }) : result;
  },

  "profile.picture.set": (ctx: SessionContext, upload: PictureUpload) => setPicture(ctx, undefined, upload),

  "profile.picture.remove": (ctx: SessionContext, _input: Record<string, never>) =>
    removePicture(ctx, undefined),

  /**
   * A status post goes through the one send path: stored, and `status.update` emitted once. WhatsApp
   * shows it only to the JIDs it lists, so without `mentions` it goes to the session's contacts.
   */
  "status.post": (ctx: SessionContext, post: StatusPost): Promise<Outcome<MessageResource>> => {
    const content = statusContent(post);
    if (!content) return Promise.resolve(failure(400, "mediaUrl is required for IMAGE and VIDEO posts"));
    if (!ctx.isConnected()) return Promise.resolve(notConnected());
    const audience = post.mentions?.length ? post.mentions : statusAudience(ctx.sql);
    if (audience.length === 0) return Promise.resolve(failure(409, NO_AUDIENCE));
    return sendMessage(ctx, {
      to: STATUS_JID,
      content,
      statusJidList: audience,
      ...(post.backgroundColor ? { backgroundColor: post.backgroundColor } : {}),
      ...(post.font !== undefined ? { font: post.font } : {}),
    });
  },
};
