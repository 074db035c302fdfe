import { vouchFor } from "../../auth/in-process";
import type { Env } from "../../core/env";
import { type LineOwnerAccess, lineOwnerAccess } from "./access";

/** The app's own fetch bound to the current request's bindings (app.ts), as MCP's tools use it. */
export type LineFetch = (request: Request) => Promise<Response>;

/**
 * What to send. `idempotencyKey` makes a retry the same WhatsApp message (the gateway's
 * Idempotency-Key): a notice sent again after its first answer was lost is not a second message.
 */
export type LineContent = (
  | { type: "text"; text: string; quotedMessageId?: string }
  | { type: "poll"; question: string; options: string[] }
  | { type: "reaction"; messageId: string; emoji: string }
) & { idempotencyKey?: string };

export type LineSendResult = { ok: true; messageId: string } | { ok: false; status: number; error: string };

const personJid = (phone: string) => `${phone}@s.whatsapp.net`;

function requestOf(origin: string, sessionId: string, phone: string, content: LineContent): Request {
  const chat = `${origin}/api/messages/${encodeURIComponent(sessionId)}/${encodeURIComponent(personJid(phone))}`;
  const key: Record<string, string> = content.idempotencyKey
    ? { "Idempotency-Key": content.idempotencyKey }
    : {};
  const post = (url: string, body: unknown) =>
    new Request(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json", ...key },
      body: JSON.stringify(body),
    });
  switch (content.type) {
    case "text":
      return post(`${chat}/send`, {
        message: { text: content.text },
        ...(content.quotedMessageId ? { quotedMessageId: content.quotedMessageId } : {}),
      });
    case "poll":
      return post(`${chat}/poll`, {
        question: content.question,
        options: content.options,
        selectableCount: 1,
      });
    case "reaction":
      return post(`${chat}/${encodeURIComponent(content.messageId)}/react`, { emoji: content.emoji });
  }
}

/**
 * Sends one message on the company's line to a member's number (digits only), as the owner who linked
 * the line, through the gateway's own REST route in-process: the WhatsApp id it got, or why not (409
 * no line / the linker no longer owns the company, or the gateway's answer: the session disconnected,
 * a bad number). Whoever calls this decides whether the number may be messaged (verified, wanted).
 * A caller sending several messages in a row resolves `access` once and passes it.
 */
export async function sendOnLine(
  env: Env,
  fetch: LineFetch,
  origin: string,
  companyId: string,
  phone: string,
  content: LineContent,
  resolved?: LineOwnerAccess,
): Promise<LineSendResult> {
  const access = resolved ?? (await lineOwnerAccess(env, companyId));
  if (!access.ok) return access;
  const response = await fetch(
    vouchFor(requestOf(origin, access.session.id, phone, content), access.principal),
  );
  const text = await response.text();
  // The gateway answers `{data: <the stored message>}` (its id is the WhatsApp id) or `{error}`.
  let body: { data?: { id?: unknown }; error?: unknown } = {};
  try {
    body = text === "" ? {} : JSON.parse(text);
  } catch {
    // Not JSON: the text is the error.
  }
  if (!response.ok) return { ok: false, status: response.status, error: String(body.error ?? text) };
  const id = body.data?.id;
  return typeof id === "string"
    ? { ok: true, messageId: id }
    : { ok: false, status: 502, error: "The gateway answered no message id" };
}
