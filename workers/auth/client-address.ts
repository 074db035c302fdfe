/**
 * The network a login attempt comes from, as the throttle counts it. One IPv6 subscriber usually holds
 * a whole /64 (2^64 addresses to rotate through for free), so an IPv6 address counts as its /64; an
 * IPv4 address (and an IPv4-mapped IPv6 one) as itself. Anything else (no CF-Connecting-IP, or a
 * value that is not an address) is kept verbatim: it is still one source.
 */
export function throttleSource(raw: string): string {
  const address = raw.trim();
  if (isIpv4(address)) return address;
  const groups = ipv6Groups(address);
  if (!groups) return address;
  const mapped = mappedIpv4(groups);
  if (mapped) return mapped;
  return `${groups.slice(0, 4).join(":")}::/64`;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function isIpv4(text: string): boolean {
  const match = IPV4.exec(text);
  return match?.slice(1).every((part) => Number(part) <= 255) ?? false;
}

const HEXTET = /^[0-9a-f]{1,4}$/;

/** The eight 16-bit groups of an IPv6 address (lower-case, no leading zeros), or null. */
function ipv6Groups(text: string): string[] | null {
  const address =
    text
      .toLowerCase()
      .replace(/^\[|\]$/g, "")
      .split("%")[0] ?? "";
  if (!address.includes(":")) return null;
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const parse = (half: string | undefined) => (half ? half.split(":").flatMap(expandTail) : []);
  const head = parse(halves[0]);
  const tail = parse(halves[1]);
  if (head.includes("") || tail.includes("")) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array<string>(missing).fill("0"), ...tail];
  return groups.every((group) => HEXTET.test(group))
    ? groups.map((group) => Number.parseInt(group, 16).toString(16))
    : null;
}

/** A dotted IPv4 tail (`::ffff:192.0.2.1`) as its two hextets; any other part as is ("" if invalid). */
function expandTail(part: string): string[] {
  if (!part.includes(".")) return [part];
  if (!isIpv4(part)) return [""];
  const [a = 0, b = 0, c = 0, d = 0] = part.split(".").map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}

/** `::ffff:a.b.c.d` is an IPv4 client seen through an IPv6 socket: it counts as that IPv4 address. */
function mappedIpv4(groups: string[]): string | null {
  const prefix = groups.slice(0, 6).join(":");
  if (prefix !== "0:0:0:0:0:ffff") return null;
  const high = Number.parseInt(groups[6] ?? "0", 16);
  const low = Number.parseInt(groups[7] ?? "0", 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}
