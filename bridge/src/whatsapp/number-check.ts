/**
 * Whether numbers are on WhatsApp, answered by WhatsApp's usync `contact` protocol. Loaded only by
 * operations.ts (see the rule in mapping.ts).
 *
 * WhatsApp resolves a number to the account it reaches and answers under that account's JID, which
 * need not hold the digits asked: a Brazilian mobile asked with its ninth digit (55 11 9xxxx-xxxx)
 * answers as the account registered without it (55 11 xxxx-xxxx) and the reverse; a Mexican one asked
 * as 52 1 + ten digits answers as 52 + ten digits. The `contact` node of each answer echoes the number
 * as asked (whatsmeow reads it as `IsOnWhatsAppResponse.Query`); Baileys' own parser, and so
 * `onWhatsApp`, drops it. This protocol keeps it, so each answer maps back to its question.
 */
import {
  assertNodeErrorFree,
  type BinaryNode,
  jidNormalizedUser,
  type USyncQuery,
  type USyncQueryResultList,
  type USyncUser,
} from "@whiskeysockets/baileys";

/** Baileys does not export the protocol interface by name. */
type USyncQueryProtocol = USyncQuery["protocols"][number];

/** One `contact` answer: on WhatsApp or not, and the number as asked (absent if WhatsApp left it out). */
interface ContactAnswer {
  exists: boolean;
  asked: string | undefined;
}

function textOf(content: BinaryNode["content"]): string | undefined {
  if (typeof content === "string") return content;
  return content instanceof Uint8Array ? Buffer.from(content).toString() : undefined;
}

const digitsOf = (text: string) => text.replace(/\D/g, "");

/** Baileys' `contact` protocol (the same query), with a parser that keeps the echoed number. */
export const CONTACT_WITH_ECHO: USyncQueryProtocol = {
  name: "contact",
  getQueryElement: () => ({ tag: "contact", attrs: {} }),
  getUserElement: (user: USyncUser) =>
    user.phone ? { tag: "contact", attrs: {}, content: user.phone } : { tag: "contact", attrs: {} },
  parser: (node: BinaryNode): ContactAnswer | null => {
    if (node.tag !== "contact") return null;
    assertNodeErrorFree(node);
    const asked = textOf(node.content);
    return { exists: node.attrs.type === "in", asked: asked ? digitsOf(asked) : undefined };
  },
};

const isContactAnswer = (value: unknown): value is ContactAnswer =>
  typeof value === "object" && value !== null && typeof (value as ContactAnswer).exists === "boolean";

/**
 * The resolved JID of every number WhatsApp says exists, keyed by the number as asked. An answer
 * without the echo (not seen from WhatsApp) falls back to the digits of its JID.
 */
export function answersByNumber(list: USyncQueryResultList[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const entry of list) {
    const answer = entry.contact;
    if (!isContactAnswer(answer) || !answer.exists) continue;
    const jid = jidNormalizedUser(entry.id);
    found.set(answer.asked ?? digitsOf(jid.split("@")[0] ?? ""), jid);
  }
  return found;
}
