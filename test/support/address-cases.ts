/**
 * One table of addresses and the verdict the SSRF guard must reach on each, shared by the workerd
 * suite (webhook targets) and the Node suite (media fetches): the Worker and the bridge run the same
 * guard, and these cases are what proves it. Pure data, so both runtimes can import it.
 */

export interface AddressCase {
  address: string;
  private: boolean;
  why: string;
}

export const ADDRESS_CASES: readonly AddressCase[] = [
  { address: "0.0.0.0", private: true, why: "this network" },
  { address: "10.1.2.3", private: true, why: "RFC 1918" },
  { address: "100.64.0.1", private: true, why: "carrier-grade NAT" },
  { address: "127.0.0.1", private: true, why: "loopback" },
  { address: "169.254.169.254", private: true, why: "link-local, cloud metadata" },
  { address: "172.16.0.1", private: true, why: "RFC 1918" },
  { address: "192.0.0.8", private: true, why: "IETF protocol assignments" },
  { address: "192.0.2.1", private: true, why: "documentation (TEST-NET-1)" },
  { address: "192.168.1.1", private: true, why: "RFC 1918" },
  { address: "198.18.0.1", private: true, why: "benchmarking" },
  { address: "198.51.100.7", private: true, why: "documentation (TEST-NET-2)" },
  { address: "203.0.113.9", private: true, why: "documentation (TEST-NET-3)" },
  { address: "224.0.0.1", private: true, why: "multicast" },
  { address: "255.255.255.255", private: true, why: "reserved, broadcast" },
  { address: "::", private: true, why: "IPv6 unspecified" },
  { address: "::1", private: true, why: "IPv6 loopback" },
  { address: "[::1]", private: true, why: "bracketed as in a URL" },
  { address: "::ffff:127.0.0.1", private: true, why: "IPv4-mapped, dotted" },
  { address: "::ffff:7f00:1", private: true, why: "IPv4-mapped, hex (how the URL parser prints it)" },
  { address: "::FFFF:A9FE:A9FE", private: true, why: "IPv4-mapped metadata address, upper case" },
  { address: "::ffff:0:7f00:1", private: true, why: "IPv4-translated (SIIT)" },
  { address: "::127.0.0.1", private: true, why: "IPv4-compatible, dotted" },
  { address: "::a00:1", private: true, why: "IPv4-compatible 10.0.0.1, hex" },
  {
    address: "::8.8.8.8",
    private: true,
    why: "IPv4-compatible (deprecated, never routed), even of a public address",
  },
  { address: "64:ff9b::10.0.0.1", private: true, why: "NAT64 of a private address" },
  { address: "64:ff9b::7f00:1", private: true, why: "NAT64 of loopback" },
  { address: "64:ff9b:1::808:808", private: true, why: "local-use NAT64 prefix" },
  { address: "2002:7f00:1::", private: true, why: "6to4 of loopback" },
  { address: "2002:a9fe:a9fe::1", private: true, why: "6to4 of the metadata address" },
  { address: "2001::1", private: true, why: "Teredo" },
  { address: "2001:0:4136:e378:8000:63bf:3fff:fdd2", private: true, why: "Teredo" },
  { address: "2001:2::1", private: true, why: "IPv6 benchmarking" },
  { address: "2001:20::1", private: true, why: "ORCHIDv2" },
  { address: "2001:db8::1", private: true, why: "IPv6 documentation" },
  { address: "3fff::1", private: true, why: "IPv6 documentation (RFC 9637)" },
  { address: "100::1", private: true, why: "discard-only" },
  { address: "1::1", private: true, why: "reserved, outside global unicast (2000::/3)" },
  { address: "fc00::1", private: true, why: "unique-local" },
  { address: "fd12:3456::1", private: true, why: "unique-local" },
  { address: "fe80::1", private: true, why: "link-local" },
  { address: "fe80::1%eth0", private: true, why: "link-local with a zone id" },
  { address: "fec0::1", private: true, why: "site-local" },
  { address: "ff02::1", private: true, why: "multicast" },
  { address: "8.8.8.8", private: false, why: "public IPv4" },
  { address: "93.184.216.34", private: false, why: "public IPv4" },
  { address: "2606:4700::1111", private: false, why: "public IPv6" },
  { address: "[2606:4700::1111]", private: false, why: "public IPv6, bracketed" },
  { address: "2a00:1450:4001:80b::200e", private: false, why: "public IPv6" },
  { address: "::ffff:1.1.1.1", private: false, why: "IPv4-mapped public, dotted" },
  { address: "::ffff:101:101", private: false, why: "IPv4-mapped public, hex" },
  { address: "64:ff9b::808:808", private: false, why: "NAT64 of a public address" },
  { address: "2002:808:808::1", private: false, why: "6to4 of a public address" },
];

/** Text that is no address at all: the guard refuses it rather than guess what a dialler makes of it. */
export const NOT_ADDRESSES: readonly string[] = [
  "",
  "example.com",
  "1.2.3",
  "1.2.3.4.5",
  "256.1.1.1",
  "::ffff:1.2.3.256",
  "1::2::3",
  "12345::",
  "1:2:3:4:5:6:7:8:9",
  "[::1",
  "0x7f.1",
  "0127.0.0.1",
  "[8.8.8.8]",
];

/** Names only a local network can answer for; both runtimes refuse them before any DNS question. */
export const INTERNAL_NAMES: readonly string[] = [
  "localhost",
  "LOCALHOST.",
  "app.localhost",
  "intranet",
  "printer.local",
  "db.internal",
  "metadata.google.internal",
  "nas.home.arpa",
  "router.lan",
];

/**
 * The address as the host of an http URL, or null when no URL can carry it (zone ids): the URL
 * parser then normalises it, so the guard also sees the form a real request would have.
 */
export function urlOf(address: string): string | null {
  const host = address.includes(":") && !address.startsWith("[") ? `[${address}]` : address;
  try {
    return new URL(`http://${host}/`).href;
  } catch {
    return null;
  }
}
