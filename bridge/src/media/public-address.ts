/**
 * Media URLs come from API callers, and the bridge fetches them from wherever it runs: without a guard
 * a caller could make it read the bridge host's private network (cloud metadata, admin panels). Every
 * hop of a media fetch must resolve to public addresses only. `MEDIA_ALLOW_PRIVATE=1` lifts the guard
 * for local development and tests, where the files are served from 127.0.0.1.
 *
 * The check resolves the name and then fetch resolves it again; a DNS answer that changes in between
 * (rebinding) is not caught here — operations.md says to run bridges behind an egress policy as well.
 */
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  PRIVATE.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  PRIVATE.addSubnet(network, prefix, "ipv6");
}

export const privateAddressesAllowed = (): boolean => process.env.MEDIA_ALLOW_PRIVATE === "1";

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true; // not an address at all: refuse rather than guess
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    if (mapped) return PRIVATE.check(mapped, "ipv4");
    return PRIVATE.check(address, "ipv6");
  }
  return PRIVATE.check(address, "ipv4");
}

/** Why `url` may not be fetched, or null when every address its host resolves to is public. */
export async function privateTargetReason(url: URL): Promise<string | null> {
  if (privateAddressesAllowed()) return null;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((entry) => entry.address);
  } catch {
    return `cannot resolve ${host}`;
  }
  const blocked = addresses.find(isPrivateAddress);
  return blocked ? `${host} resolves to a private address` : null;
}
