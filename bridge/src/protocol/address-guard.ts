/**
 * The one SSRF guard, shared by the Worker (webhook targets, package URLs, media URLs) and the bridge
 * (media fetches, on every URL and every DNS answer): which addresses and host names a user-given URL
 * may reach. Pure text classification, no imports, so workerd and Node run the same code; resolving
 * names is the caller's business (the bridge does, the Worker cannot). See docs/security.md (SSRF).
 */

/** IPv4 ranges that are not on the public internet, as [network, prefix length]. */
const PRIVATE_V4: readonly (readonly [number, number])[] = [
  [0x00000000, 8], // "this network"
  [0x0a000000, 8], // RFC 1918
  [0x64400000, 10], // carrier-grade NAT
  [0x7f000000, 8], // loopback
  [0xa9fe0000, 16], // link-local, including the cloud metadata address 169.254.169.254
  [0xac100000, 12], // RFC 1918
  [0xc0000000, 24], // IETF protocol assignments
  [0xc0000200, 24], // documentation (TEST-NET-1)
  [0xc0586300, 24], // 6to4 relay anycast (deprecated)
  [0xc0a80000, 16], // RFC 1918
  [0xc6120000, 15], // benchmarking
  [0xc6336400, 24], // documentation (TEST-NET-2)
  [0xcb007100, 24], // documentation (TEST-NET-3)
  [0xe0000000, 4], // multicast
  [0xf0000000, 4], // reserved, and the broadcast address
];

/** Names only a local network answers for: single labels are refused separately. */
const INTERNAL_NAME = /(^|\.)(localhost|local|internal|intranet|lan|home|corp|localdomain|home\.arpa)$/;

const V4_PART = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const V6_GROUP = /^[0-9a-f]{1,4}$/i;

/**
 * A dotted quad as a number, or null. Strict on purpose: no leading zeros (octal to some parsers),
 * no shortened or hex forms; the URL parser has already turned those into dotted quads.
 */
function parseIpv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((part) => V4_PART.test(part))) return null;
  return parts.reduce((sum, part) => sum * 256 + Number(part), 0);
}

/** The groups of one side of `::`; a dotted quad may end the address only, and counts as two groups. */
function parseGroups(text: string, dottedAllowed: boolean): number[] | null {
  if (text === "") return [];
  const parts = text.split(":");
  const groups: number[] = [];
  for (const [index, part] of parts.entries()) {
    if (dottedAllowed && index === parts.length - 1 && part.includes(".")) {
      const v4 = parseIpv4(part);
      if (v4 === null) return null;
      groups.push(Math.floor(v4 / 0x10000), v4 % 0x10000);
    } else if (V6_GROUP.test(part)) groups.push(Number.parseInt(part, 16));
    else return null;
  }
  return groups;
}

/**
 * The eight 16-bit groups of an IPv6 address in any textual form (`::`, upper case, a dotted IPv4
 * tail), or null. A zone id (`fe80::1%eth0`) is refused as no address: it only scopes link-local
 * addresses, which are refused anyway, and a dialler's reading of it is not ours to guess.
 */
function parseIpv6(text: string): number[] | null {
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const head = parseGroups(halves[0] ?? "", halves.length === 1);
  const tail = halves.length === 2 ? parseGroups(halves[1] ?? "", true) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  return [...head, ...Array<number>(missing).fill(0), ...tail];
}

function isPrivateV4(address: number): boolean {
  return PRIVATE_V4.some(([network, bits]) => {
    const mask = (0xffffffff << (32 - bits)) >>> 0;
    return (address & mask) >>> 0 === network;
  });
}

/** The IPv4 address carried in two groups (mapped, translated, NAT64 and 6to4 forms). */
const v4Of = (high: number, low: number) => high * 0x10000 + low;

/**
 * IPv6 is refused unless it is global unicast (2000::/3) outside the special blocks, or a form that
 * reaches an IPv4 address (mapped, SIIT-translated, NAT64, 6to4) whose IPv4 address is public: those
 * are how `::ffff:127.0.0.1` or `64:ff9b::a9fe:a9fe` would lead to loopback or the metadata service.
 */
function isPrivateV6(groups: readonly number[]): boolean {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, y = 0, z = 0] = groups;
  const zeroTo64 = a === 0 && b === 0 && c === 0 && d === 0;
  if (zeroTo64 && e === 0 && f === 0xffff) return isPrivateV4(v4Of(y, z)); // ::ffff:a.b.c.d, mapped
  if (zeroTo64 && e === 0xffff && f === 0) return isPrivateV4(v4Of(y, z)); // ::ffff:0:a.b.c.d, SIIT
  // ::/96 holds the unspecified and loopback addresses and the deprecated IPv4-compatible form.
  if (zeroTo64 && e === 0 && f === 0) return true;
  if (a === 0x64 && b === 0xff9b) {
    // 64:ff9b::/96 is the well-known NAT64 prefix; the rest of 64:ff9b::/16 is local-use.
    return c !== 0 || d !== 0 || e !== 0 || f !== 0 || isPrivateV4(v4Of(y, z));
  }
  if (a === 0x2002) return isPrivateV4(v4Of(b, c)); // 6to4
  if (a === 0x2001 && b === 0) return true; // Teredo, which tunnels to any IPv4 address
  if (a === 0x2001 && b === 2 && c === 0) return true; // benchmarking
  if (a === 0x2001 && (b & 0xfff0) === 0x20) return true; // ORCHIDv2
  if (a === 0x2001 && b === 0xdb8) return true; // documentation
  if (a === 0x3fff && b < 0x1000) return true; // documentation (RFC 9637)
  // Outside 2000::/3: discard-only, unique-local, link- and site-local, multicast and reserved.
  return (a & 0xe000) !== 0x2000;
}

/**
 * Whether `text` is an address a user-given URL must not reach: private, loopback, link-local,
 * reserved and the like, in IPv4 or any IPv6 spelling (brackets allowed). Text that is no address at
 * all counts as private: refuse rather than guess what a dialler would make of it.
 */
export function isPrivateAddress(text: string): boolean {
  const bracketed = text.startsWith("[") && text.endsWith("]");
  const bare = bracketed ? text.slice(1, -1) : text;
  const v4 = bracketed ? null : parseIpv4(bare);
  if (v4 !== null) return isPrivateV4(v4);
  const v6 = parseIpv6(bare);
  return v6 === null ? true : isPrivateV6(v6);
}

/** Whether a URL's host is an IP literal (the URL parser has normalised every IPv4 spelling). */
export const isAddressLiteral = (host: string): boolean => parseIpv4(host) !== null || host.includes(":");

/** A URL's host as the lists and messages use it: no IPv6 brackets, no trailing dot, lower case. */
export function hostOf(url: URL): string {
  return url.hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
}

/** A comma-separated list of hosts exempt from the guard (WEBHOOK_ALLOWED_HOSTS, MEDIA_ALLOWED_HOSTS). */
export function allowedHostsOf(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean);
}

/** Why a URL may not be fetched whatever its host: scheme and credentials. Null when fine. */
export function urlShapeProblem(url: URL): string | null {
  if (url.protocol !== "https:" && url.protocol !== "http:") return "url must use http or https";
  if (url.username || url.password) return "url must not carry credentials";
  return null;
}

/**
 * Why `host` (as `hostOf` gives it) may not be reached, judged on its text alone: a private literal,
 * or a name only a local network answers for. Null when the text looks public; a name can still
 * resolve to a private address, which only a resolver can tell (the bridge checks its answers).
 */
export function hostProblem(host: string, allowedHosts: readonly string[]): string | null {
  if (allowedHosts.includes(host)) return null;
  if (isAddressLiteral(host)) return isPrivateAddress(host) ? `${host} is a private address` : null;
  if (INTERNAL_NAME.test(host) || !host.includes(".")) return `${host} is not a public host name`;
  return null;
}

/** Why a user-given URL may not be fetched, or null: shape first, then its host's text. */
export function urlTargetProblem(url: string | URL, allowedHosts: readonly string[]): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "url must be an absolute http(s) URL";
  }
  return urlShapeProblem(parsed) ?? hostProblem(hostOf(parsed), allowedHosts);
}
