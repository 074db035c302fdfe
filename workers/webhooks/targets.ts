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

function isPrivateV6(host: string): boolean {
  const h = host.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h)?.[1];
  if (mapped) return isPrivateV4(ipv4(mapped) ?? 0);
  return h === "::" || h === "::1" || /^f[cd]/.test(h) || /^fe[89ab]/.test(h) || h.startsWith("ff");
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
  const host = parsed.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (allowedHosts.includes(host)) return null;
  const v4 = ipv4(host);
  if (v4 !== null) return isPrivateV4(v4) ? `${host} is a private address` : null;
  if (host.includes(":")) return isPrivateV6(host) ? `${host} is a private address` : null;
  if (INTERNAL_NAMES.test(host) || !host.includes(".")) return `${host} is not a public host name`;
  return null;
}
