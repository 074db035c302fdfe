/**
 * Where a webhook may point. A Worker cannot resolve names itself, so this refuses what it can see:
 * non-HTTP(S) schemes, credentials in the URL, IP literals in private, loopback, link-local, CGNAT or
 * metadata ranges, and names that only resolve inside a network (localhost, *.local, *.internal, …).
 * Deliveries never follow redirects (a 3xx is a failed attempt), so a redirect cannot lead inside.
 * `WEBHOOK_ALLOWED_HOSTS` (comma-separated host names or IPs) lets a deployment allow specific private
 * targets; local development allows 127.0.0.1 and localhost that way.
 */
const PRIVATE_V4: [number, number][] = [
  [0x00000000, 8],
  [0x0a000000, 8],
  [0x64400000, 10],
  [0x7f000000, 8],
  [0xa9fe0000, 16],
  [0xac100000, 12],
  [0xc0000000, 24],
  [0xc0a80000, 16],
  [0xc6120000, 15],
  [0xe0000000, 4],
  [0xf0000000, 4],
];
const INTERNAL_NAMES = /(^|\.)(localhost|local|internal|intranet|lan|home|corp|localdomain)$/i;

function ipv4(host: string): number | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

function isPrivateV4(address: number): boolean {
  return PRIVATE_V4.some(([network, bits]) => {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    return (address & mask) >>> 0 === network;
  });
}

/** The eight 16-bit groups of an IPv6 literal as the URL parser prints it (no zone, `::` allowed). */
function ipv6Groups(host: string): number[] | null {
  const halves = host.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const head = parse(halves[0] ?? "");
  const tail = halves.length === 2 ? parse(halves[1] ?? "") : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return null;
  const groups = [...head, ...Array<number>(missing).fill(0), ...tail];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

const v4Of = (high: number, low: number) => high * 0x10000 + low;

/**
 * IPv6 literals refused: unspecified, loopback, unique-local, link- and site-local, multicast,
 * discard-only, documentation and Teredo, plus every form that embeds an IPv4 address (mapped,
 * compatible, NAT64, 6to4) when that address is private. The URL parser prints embedded IPv4 in hex
 * (`::ffff:7f00:1`), so the groups are compared, not the text.
 */
function isPrivateV6(host: string): boolean {
  const g = ipv6Groups(host);
  if (!g) return true;
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, y = 0, z = 0] = g;
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && (f === 0 || f === 0xffff)) {
    return isPrivateV4(v4Of(y, z));
  }
  if (a === 0x64 && b === 0xff9b) return c !== 0 || d !== 0 || e !== 0 || f !== 0 || isPrivateV4(v4Of(y, z));
  if (a === 0x2002) return isPrivateV4(v4Of(b, c));
  if (a === 0x2001 && (b === 0 || b === 0xdb8)) return true;
  if (a === 0x100 && b === 0 && c === 0 && d === 0) return true;
  return (
    (a & 0xfe00) === 0xfc00 || (a & 0xffc0) === 0xfe80 || (a & 0xffc0) === 0xfec0 || (a & 0xff00) === 0xff00
  );
}

export function allowedHostsOf(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean);
}

/** Why `url` may not receive webhooks, or null when it may. */
export function webhookTargetProblem(url: string, allowedHosts: readonly string[]): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "url must be an absolute http(s) URL";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return "url must use http or https";
  if (parsed.username || parsed.password) return "url must not carry credentials";
  // A trailing dot names the same host ("localhost." is localhost).
  const host = parsed.hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
  if (allowedHosts.includes(host)) return null;
  const v4 = ipv4(host);
  if (v4 !== null) return isPrivateV4(v4) ? `${host} is a private address` : null;
  if (host.includes(":")) return isPrivateV6(host) ? `${host} is a private address` : null;
  if (INTERNAL_NAMES.test(host) || !host.includes(".")) return `${host} is not a public host name`;
  return null;
}
