/**
 * A session's proxy: its WhatsApp socket and its media (uploads, downloads, history blobs) leave
 * through a SOCKS5/SOCKS4 proxy or an HTTP proxy (CONNECT), so each account can be seen by WhatsApp
 * from an address of its own — the ban-risk control the peer gateways offer.
 *
 * One tunnel function serves three clients, because each speaks a different agent dialect: the `ws`
 * WebSocket (a Node `http(s).Agent`), Baileys' uploads (a Node `https.Agent`, its `fetchAgent`) and
 * Baileys' downloads (global `fetch`, which only takes an undici dispatcher). TLS to the destination is
 * always ours, end to end through the tunnel: the proxy sees only where we connect, never the bytes.
 */
import { lookup } from "node:dns/promises";
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { isIP, connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { SocksClient } from "socks";
import { Agent as UndiciAgent } from "undici";
import { describeProxy, type ProxyTarget, readProxyUrl } from "../protocol/proxy.ts";

/** Why a tunnel could not be opened; `code` starts with E so Baileys and the bridge see a network failure. */
export class ProxyError extends Error {
  readonly code = "EPROXY";
  constructor(message: string) {
    super(message);
    this.name = "ProxyError";
  }
}

const TUNNEL_TIMEOUT_MS = 10_000;
/** An HTTP proxy's answer to CONNECT is a short header; more than this is not a proxy talking. */
const MAX_CONNECT_RESPONSE_BYTES = 16 * 1024;

/** The proxy a session was given; a URL the API would have refused cannot be used. */
export function parseProxyUrl(text: string): ProxyTarget {
  const read = readProxyUrl(text);
  if ("error" in read) throw new ProxyError(read.error);
  return read.proxy;
}

/** A plain TCP connection to `host:port` through the proxy (TLS, if any, is the caller's). */
export async function openTunnel(proxy: ProxyTarget, host: string, port: number): Promise<Socket> {
  try {
    return proxy.scheme === "http"
      ? await connectThroughHttp(proxy, host, port)
      : await connectThroughSocks(proxy, host, port);
  } catch (error) {
    if (error instanceof ProxyError) throw error;
    // The socks client reports "connect ECONNREFUSED host:port" without a code: the code is what says it.
    const message = error instanceof Error ? error.message : String(error);
    const detail = (error as { code?: string }).code ?? /\bE[A-Z]{3,}\b/.exec(message)?.[0] ?? message;
    throw new ProxyError(`proxy ${describeProxy(proxy)} could not be used (${detail})`);
  }
}

async function connectThroughSocks(proxy: ProxyTarget, host: string, port: number): Promise<Socket> {
  // socks5h and socks4 let the proxy resolve names (socks4 via 4a); socks5 resolves here, as curl does.
  const destination = proxy.scheme === "socks5" && isIP(host) === 0 ? (await lookup(host)).address : host;
  const { socket } = await SocksClient.createConnection({
    proxy: {
      host: proxy.host,
      port: proxy.port,
      type: proxy.scheme === "socks4" ? 4 : 5,
      ...(proxy.username ? { userId: proxy.username } : {}),
      ...(proxy.password ? { password: proxy.password } : {}),
    },
    command: "connect",
    destination: { host: destination, port },
    timeout: TUNNEL_TIMEOUT_MS,
  });
  return socket;
}

function connectThroughHttp(proxy: ProxyTarget, host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(proxy.port, proxy.host);
    const fail = (error: Error) => {
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(TUNNEL_TIMEOUT_MS, () =>
      fail(new ProxyError(`proxy ${describeProxy(proxy)} did not answer in time`)),
    );
    socket.once("error", fail);
    socket.once("connect", () => socket.write(connectRequest(proxy, host, port)));
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > MAX_CONNECT_RESPONSE_BYTES)
          fail(new ProxyError(`proxy ${describeProxy(proxy)} sent an oversized answer`));
        return;
      }
      socket.off("data", onData);
      socket.off("error", fail);
      socket.setTimeout(0);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, end).toString("latin1"))?.[1];
      if (status !== "200") {
        fail(new ProxyError(`proxy ${describeProxy(proxy)} refused the tunnel (${status ?? "not HTTP"})`));
        return;
      }
      // Bytes after the header already belong to the destination.
      const rest = head.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolve(socket);
    };
    socket.on("data", onData);
  });
}

function connectRequest(proxy: ProxyTarget, host: string, port: number): string {
  const authority = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  const credentials =
    proxy.username !== undefined
      ? `Proxy-Authorization: Basic ${Buffer.from(`${proxy.username}:${proxy.password ?? ""}`).toString("base64")}\r\n`
      : "";
  return `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${credentials}\r\n`;
}

interface ConnectOptions {
  host?: string | null;
  hostname?: string | null;
  port?: number | string | null;
  servername?: string | null;
  ca?: string | Buffer | Array<string | Buffer>;
}

type Created = (error: Error | null, socket?: Socket) => void;

function destinationOf(options: ConnectOptions, defaultPort: number): { host: string; port: number } {
  const host = options.hostname ?? options.host ?? "localhost";
  return { host, port: Number(options.port || defaultPort) };
}

/** TLS to the destination over the tunnel, checked against the system's roots (and NODE_EXTRA_CA_CERTS). */
function secure(socket: Socket, options: ConnectOptions, host: string): Socket {
  return tlsConnect({
    socket,
    // The certificate is checked against `host` (an IP address too); SNI carries names only.
    host,
    servername: options.servername || (isIP(host) === 0 ? host : undefined),
    ...(options.ca ? { ca: options.ca } : {}),
  });
}

/** Node calls `createConnection(options, callback)` and waits for the callback when it returns nothing. */
function tunnelled(proxy: ProxyTarget, tls: boolean) {
  return (options: ConnectOptions, callback: Created): undefined => {
    const { host, port } = destinationOf(options, tls ? 443 : 80);
    openTunnel(proxy, host, port).then(
      (socket) => callback(null, tls ? secure(socket, options, host) : socket),
      (error: Error) => callback(error),
    );
    return undefined;
  };
}

class TunnelHttpAgent extends HttpAgent {
  constructor(proxy: ProxyTarget) {
    super({ keepAlive: false });
    Object.assign(this, { createConnection: tunnelled(proxy, false) });
  }
}

class TunnelHttpsAgent extends HttpsAgent {
  constructor(proxy: ProxyTarget) {
    super({ keepAlive: false });
    Object.assign(this, { createConnection: tunnelled(proxy, true) });
  }
}

export interface ProxyAgents {
  /** For the WhatsApp WebSocket (`ws://` to a test server, `wss://` to WhatsApp). */
  socket: HttpAgent;
  /** Baileys' uploads (`fetchAgent`). */
  uploads: HttpsAgent;
  /** Baileys' downloads and history blobs (global fetch's `dispatcher`). */
  downloads: UndiciAgent;
  describe: string;
}

export function proxyAgents(proxy: ProxyTarget, socketUrl: string): ProxyAgents {
  const downloads = new UndiciAgent({
    connect: (options, callback) => {
      const tls = options.protocol === "https:";
      const port = Number(options.port || (tls ? 443 : 80));
      openTunnel(proxy, options.hostname, port).then(
        (socket) => callback(null, tls ? secure(socket, options, options.hostname) : socket),
        (error: Error) => callback(error, null),
      );
    },
  });
  return {
    socket: socketUrl.startsWith("ws://") ? new TunnelHttpAgent(proxy) : new TunnelHttpsAgent(proxy),
    uploads: new TunnelHttpsAgent(proxy),
    downloads,
    describe: describeProxy(proxy),
  };
}
