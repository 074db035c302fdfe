/**
 * A session's proxy URL, as the API takes it and the edge hands it to the bridge: one reading on both
 * sides, so a URL the API accepted is one the bridge can use.
 */
import { z } from "zod";

export const PROXY_SCHEMES = ["socks5", "socks5h", "socks4", "http"] as const;
export type ProxyScheme = (typeof PROXY_SCHEMES)[number];

export interface ProxyTarget {
  scheme: ProxyScheme;
  host: string;
  port: number;
  username?: string;
  password?: string;
}

export const PROXY_URL_MAX = 2048;

const isIpv6 = (host: string) => host.includes(":");

/** `scheme://[user[:password]@]host:port`, nothing else; the error says what is wrong, never the URL. */
export function readProxyUrl(text: string): { proxy: ProxyTarget } | { error: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: "proxy is not a URL" };
  }
  const scheme = url.protocol.replace(/:$/, "");
  if (!(PROXY_SCHEMES as readonly string[]).includes(scheme)) {
    return { error: `proxy scheme must be one of ${PROXY_SCHEMES.join(", ")}` };
  }
  if (!url.hostname || !url.port) return { error: "proxy needs a host and a port" };
  if ((url.pathname && url.pathname !== "/") || url.search || url.hash) {
    return { error: "proxy URL takes no path, query or fragment" };
  }
  return {
    proxy: {
      scheme: scheme as ProxyScheme,
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: Number(url.port),
      ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
      ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    },
  };
}

/** How a proxy is named in responses, logs and session errors: never its credentials. */
export function describeProxy(proxy: ProxyTarget): string {
  return `${proxy.scheme}://${isIpv6(proxy.host) ? `[${proxy.host}]` : proxy.host}:${proxy.port}`;
}

export const ProxyUrlSchema = z
  .string()
  .max(PROXY_URL_MAX)
  .superRefine((text, context) => {
    const read = readProxyUrl(text);
    if ("error" in read) context.addIssue({ code: "custom", message: read.error });
  });
