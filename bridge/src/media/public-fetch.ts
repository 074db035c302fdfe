/**
 * GET of a caller's media URL that only ever reaches public addresses. Every hop (the URL and each
 * redirect, at most MAX_REDIRECTS) is judged by the shared guard on its text, then connected through a
 * lookup that resolves once, checks every answer and dials what it checked (public-address.ts).
 *
 * node:http rather than fetch: fetch resolves names itself, out of our reach, so a check before it
 * would be a second, separate resolution that DNS rebinding can answer differently. No
 * Accept-Encoding is sent, so bodies arrive as the server holds them and need no decoding.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { Readable } from "node:stream";
import { hostOf, hostProblem, isAddressLiteral, urlShapeProblem } from "../protocol/address-guard.ts";
import { OperationError } from "../protocol/seam.ts";
import {
  mediaAllowedHosts,
  pinnedLookup,
  privateAddressesAllowed,
  publicLookup,
  RefusedTarget,
  type Resolver,
  systemResolver,
} from "./public-address.ts";

export const MAX_REDIRECTS = 5;

export interface PublicFetchOptions {
  signal: AbortSignal;
  /** DNS; the system resolver unless a test stands in for it. */
  resolve?: Resolver;
  /** Hosts exempt from the guard (still resolved once and pinned); default MEDIA_ALLOWED_HOSTS. */
  allowedHosts?: readonly string[];
}

const refused = (why: string) => new OperationError(400, `could not fetch media: ${why}`);

const isRedirect = (status: number) => [301, 302, 303, 307, 308].includes(status);

/** The lookup a hop connects through, or why it may not be made at all. */
function lookupFor(url: URL, options: PublicFetchOptions): LookupFunction {
  const resolve = options.resolve ?? systemResolver;
  const shape = urlShapeProblem(url);
  if (shape) throw refused(shape);
  if (privateAddressesAllowed()) return pinnedLookup(resolve);
  const host = hostOf(url);
  const allowed = options.allowedHosts ?? mediaAllowedHosts();
  const problem = hostProblem(host, allowed);
  if (problem) throw refused(problem);
  // A literal is never looked up (the socket dials it), and the guard has just judged it.
  return allowed.includes(host) || isAddressLiteral(host) ? pinnedLookup(resolve) : publicLookup(resolve);
}

/** Node's answer as a fetch Response, streaming its body (null where a body is not allowed). */
function toResponse(message: IncomingMessage): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value])
      headers.append(name, one);
  }
  const status = message.statusCode ?? 0;
  const bodiless = [204, 205, 304].includes(status);
  if (bodiless) message.resume();
  const body = bodiless ? null : (Readable.toWeb(message) as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: message.statusMessage ?? "", headers });
}

/** One GET through `lookup`, on a connection of its own (a pooled socket would skip the lookup). */
function get(url: URL, lookup: LookupFunction, signal: AbortSignal): Promise<Response> {
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = send(url, { method: "GET", agent: false, lookup, signal }, (message) => {
      try {
        resolve(toResponse(message));
      } catch (error) {
        message.destroy();
        reject(error);
      }
    });
    outgoing.on("error", (error) => reject(error instanceof RefusedTarget ? refused(error.message) : error));
    outgoing.end();
  });
}

/** Fetches a caller's URL, following redirects by hand so every hop is judged before it is dialled. */
export async function fetchPublic(url: string, options: PublicFetchOptions): Promise<Response> {
  let target = new URL(url);
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const response = await get(target, lookupFor(target, options), options.signal);
    const location = response.headers.get("location");
    if (!isRedirect(response.status) || !location) return response;
    await response.body?.cancel();
    target = new URL(location, target);
    if (target.protocol !== "http:" && target.protocol !== "https:")
      throw refused("redirect to a non-HTTP URL");
  }
  throw refused("too many redirects");
}
