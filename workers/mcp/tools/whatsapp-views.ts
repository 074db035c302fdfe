import type { z } from "@hono/zod-openapi";
import type { GroupSchema } from "../../gateway/groups";
import type { MessageResourceSchema } from "../../gateway/messages";
import type { SessionSchema } from "../../gateway/sessions";

/**
 * What the WhatsApp read tools answer: the REST bodies made compact for a model. Every id a later call
 * needs (message ids, jids, cursors) is kept; what is left out is said in the tools' descriptions.
 */

type MessageResource = z.infer<typeof MessageResourceSchema>;
type SessionResource = z.infer<typeof SessionSchema>;
/** A group as the list shows it, or as one group shows it (GroupDetail: the same with pictureUrl). */
type GroupResource = z.infer<typeof GroupSchema> & { pictureUrl?: string | null };

/** The REST envelope `{status, message, data, …}`: the tools answer `data` (and paging), not the envelope. */
export interface Envelope<T> {
  data: T;
  pagination?: Record<string, unknown>;
}

/** A field only when it says something: absent rather than null, false, empty. */
const when = <K extends string, V>(
  key: K,
  value: V | null | undefined,
  keep = value !== null && value !== undefined,
) => (keep ? ({ [key]: value } as Record<K, V>) : {});

/** What a poll or a location says beyond its text (question, place name): the options, the coordinates. */
function detailsOf(content: MessageResource["message"]): Record<string, unknown> {
  if (content.type === "poll")
    return { poll: { options: content.options, selectable: content.selectableCount } };
  if (content.type === "location")
    return { location: { latitude: content.latitude, longitude: content.longitude } };
  return {};
}

/**
 * One message as a model reads it: who, when, what it says. The structured `message` (media
 * descriptions, vCards, mentions) is left out; a poll's options and a location's coordinates are kept,
 * and media is a download path.
 */
export function compactMessage(message: MessageResource) {
  return {
    id: message.id,
    chat: message.remoteJid,
    sender: message.sender,
    fromMe: message.fromMe,
    ...when("pushName", message.pushName),
    type: message.type,
    text: message.content,
    timestamp: message.timestamp,
    ...when("status", message.status),
    ...when("quotedId", message.quotedId),
    ...when("mediaUrl", message.mediaUrl),
    ...detailsOf(message.message),
    ...when("reactions", message.reactions, Object.keys(message.reactions).length > 0),
    ...when("starred", message.starred, message.starred),
    ...when("editedAt", message.editedAt),
    ...when("deletedAt", message.deletedAt),
  };
}

export const compactMessages = (messages: MessageResource[]) => messages.map(compactMessage);

/** A session without its bot config, webhooks and counters: what a model needs to pick one. */
export const compactSession = ({ id, sessionId, name, status, state, me }: SessionResource) => ({
  id,
  sessionId,
  name,
  status,
  state,
  me,
});

/** A group without the spec's duplicate names (`id` = `jid`, `desc` = `description`). */
export function compactGroup(group: GroupResource) {
  const { id: _sameAsJid, desc: _sameAsDescription, ...rest } = group;
  return rest;
}

/** A group in a list: without its members, which can be hundreds per group (get_group has them). */
export function groupSummary(group: GroupResource) {
  const { participants: _members, ...rest } = compactGroup(group);
  return rest;
}
