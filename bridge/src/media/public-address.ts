/**
 * The bridge's half of the SSRF guard: DNS. Media URLs come from API callers and the bridge fetches
 * them from wherever it runs, so a name must not lead into the bridge host's network (metadata,
 * admin panels). The shared guard (protocol/address-guard.ts) judges the URL's text; here a name is
 * resolved once, refused if ANY answer is private, and the connection is handed exactly the answers
 * that were checked. Node calls a socket's `lookup` instead of resolving itself, so there is no second
 * resolution a rebinding DNS server could answer differently.
 *
 * `MEDIA_ALLOW_PRIVATE=1` lifts the guard for local development and tests, where files are served
 * from 127.0.0.1; `MEDIA_ALLOWED_HOSTS` (comma-separated) exempts specific hosts, as
 * WEBHOOK_ALLOWED_HOSTS does on the edge.
 */
import type { LookupAddress, LookupOptions } from "node:dns";
import { lookup as systemLookup } from "node:dns/promises";
import { isIP, type LookupFunction } from "node:net";
import { allowedHostsOf, isPrivateAddress } from "../protocol/address-guard.ts";

/** Answers a host name with addresses (the system resolver in production; a fake at DNS in tests). */
export type Resolver = (host: string) => Promise<string[]>;

/** getaddrinfo, as a plain connection would use it (hosts file included), every answer in order. */
export const systemResolver: Resolver = async (host) =>
  (await systemLookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

export const privateAddressesAllowed = (): boolean => process.env.MEDIA_ALLOW_PRIVATE === "1";
export const mediaAllowedHosts = (): string[] => allowedHostsOf(process.env.MEDIA_ALLOWED_HOSTS);

/** A target the guard refused; its message says why and is shown to the API caller. */
export class RefusedTarget extends Error {
  override readonly name = "RefusedTarget";
}

/** The resolver's answers for `host`, refused when there are none or (if `checked`) any is private. */
async function answersFor(resolve: Resolver, host: string, checked: boolean): Promise<LookupAddress[]> {
  let answers: string[];
  try {
    answers = await resolve(host);
  } catch {
    throw new RefusedTarget(`cannot resolve ${host}`);
  }
  // One private answer is enough: which of them the connection would try first is not ours to know.
  if (checked && answers.some(isPrivateAddress))
    throw new RefusedTarget(`${host} resolves to a private address`);
  const usable = answers.flatMap((address) => (isIP(address) ? [{ address, family: isIP(address) }] : []));
  if (usable.length === 0) throw new RefusedTarget(`cannot resolve ${host}`);
  return usable;
}

const wantedFamily = (options: LookupOptions): number =>
  options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : Number(options.family ?? 0);

/** A socket `lookup` that answers from `resolve` after judging the answers (or not, if `checked` is false). */
function answeringLookup(resolve: Resolver, checked: boolean): LookupFunction {
  return (hostname, options, callback) => {
    answersFor(resolve, hostname, checked).then(
      (answers) => {
        const family = wantedFamily(options);
        const fitting = family ? answers.filter((answer) => answer.family === family) : answers;
        const first = fitting[0];
        if (!first) callback(new RefusedTarget(`cannot resolve ${hostname}`), "", 0);
        else if (options.all) callback(null, fitting);
        else callback(null, first.address, first.family);
      },
      (error: Error) => callback(error, "", 0),
    );
  };
}

/** The lookup for a name the guard must judge: every answer public, or the connection never starts. */
export const publicLookup = (resolve: Resolver): LookupFunction => answeringLookup(resolve, true);

/** The lookup for an exempted name: unchecked, but still resolved once and pinned. */
export const pinnedLookup = (resolve: Resolver): LookupFunction => answeringLookup(resolve, false);
