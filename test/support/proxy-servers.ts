/**
 * Local proxies a session can be pointed at, the far end of the wire for proxy tests: an HTTP proxy
 * (CONNECT, on Node's own HTTP server) and a SOCKS5 server (RFC 1928, with RFC 1929 username/password).
 * Each records the tunnels it opened (destination host and port), so a test can tell which
 * connections went through it, and refuses wrong credentials as a real proxy does.
 */
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer, type Server, type Socket, connect as tcpConnect } from "node:net";

export interface Tunnel {
  host: string;
  port: number;
}

export interface TestProxy {
  /** `scheme://[user:password@]127.0.0.1:port`, ready for `PUT /api/sessions/{id}/proxy`. */
  url: string;
  tunnels: Tunnel[];
  /** Connections refused for wrong or missing credentials. */
  refused: number;
  close(): Promise<void>;
}

interface ProxyOptions {
  username?: string;
  password?: string;
}

/** Opens the tunnel: `onOpen` answers the client, then bytes flow both ways (`early` first). */
function pipeTo(
  client: Socket,
  destination: Tunnel,
  early: Buffer,
  onOpen: () => void,
  onFail: () => void,
): void {
  const upstream = tcpConnect(destination.port, destination.host);
  upstream.once("error", onFail);
  client.once("error", () => upstream.destroy());
  client.once("close", () => upstream.destroy());
  upstream.once("connect", () => {
    onOpen();
    if (early.length > 0) upstream.write(early);
    upstream.pipe(client);
    client.pipe(upstream);
  });
}

function listening(server: Server, sockets: Set<Socket>): Promise<number> {
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );
}

function closer(server: Server, sockets: Set<Socket>) {
  return () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
}

const credentialsIn = ({ username, password }: ProxyOptions) =>
  username === undefined ? "" : `${encodeURIComponent(username)}:${encodeURIComponent(password ?? "")}@`;

/** An HTTP proxy that only tunnels (CONNECT), with Basic proxy authentication when given credentials. */
export async function startConnectProxy(options: ProxyOptions = {}): Promise<TestProxy> {
  const server = createHttpServer((_, response) => response.writeHead(405).end());
  const sockets = new Set<Socket>();
  const expected =
    options.username === undefined
      ? null
      : `Basic ${Buffer.from(`${options.username}:${options.password ?? ""}`).toString("base64")}`;
  const proxy: TestProxy = { url: "", tunnels: [], refused: 0, close: closer(server, sockets) };
  server.on("connect", (request, client: Socket, head: Buffer) => {
    if (expected !== null && request.headers["proxy-authorization"] !== expected) {
      proxy.refused++;
      client.end("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n");
      return;
    }
    const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(request.url ?? "");
    if (!match) {
      client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
      return;
    }
    const destination = { host: match[1] ?? "", port: Number(match[2]) };
    pipeTo(
      client,
      destination,
      head,
      () => {
        proxy.tunnels.push(destination);
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      },
      () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"),
    );
  });
  const port = await listening(server, sockets);
  proxy.url = `http://${credentialsIn(options)}127.0.0.1:${port}`;
  return proxy;
}

/** Reads exactly the bytes asked for, in order, from a socket's stream of chunks. */
class Reader {
  private buffered = Buffer.alloc(0);
  private waiting: { size: number; resolve: (bytes: Buffer) => void } | null = null;

  constructor(private readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.settle();
    });
  }

  read(size: number): Promise<Buffer> {
    return new Promise((resolve) => {
      this.waiting = { size, resolve };
      this.settle();
    });
  }

  /** Stops reading: what follows the handshake is piped, and bytes already here go first. */
  release(): Buffer {
    this.socket.removeAllListeners("data");
    return this.buffered;
  }

  private settle(): void {
    if (!this.waiting || this.buffered.length < this.waiting.size) return;
    const { size, resolve } = this.waiting;
    this.waiting = null;
    const bytes = this.buffered.subarray(0, size);
    this.buffered = this.buffered.subarray(size);
    resolve(bytes);
  }
}

const SOCKS_VERSION = 5;
const NO_AUTH = 0x00;
const USER_PASS = 0x02;
const NO_METHOD = 0xff;

async function socksDestination(reader: Reader): Promise<Tunnel | null> {
  const [version, command, , type] = await reader.read(4);
  if (version !== SOCKS_VERSION || command !== 1) return null;
  let host: string;
  if (type === 1) host = [...(await reader.read(4))].join(".");
  else if (type === 3) host = (await reader.read((await reader.read(1))[0] ?? 0)).toString("latin1");
  else if (type === 4) {
    const raw = await reader.read(16);
    host = Array.from({ length: 8 }, (_, i) => raw.readUInt16BE(i * 2).toString(16)).join(":");
  } else return null;
  return { host, port: (await reader.read(2)).readUInt16BE(0) };
}

async function socksAuthenticated(reader: Reader, client: Socket, options: ProxyOptions): Promise<boolean> {
  const [version, count] = await reader.read(2);
  const methods = [...(await reader.read(count ?? 0))];
  const wanted = options.username === undefined ? NO_AUTH : USER_PASS;
  if (version !== SOCKS_VERSION || !methods.includes(wanted)) {
    client.end(Buffer.from([SOCKS_VERSION, NO_METHOD]));
    return false;
  }
  client.write(Buffer.from([SOCKS_VERSION, wanted]));
  if (wanted === NO_AUTH) return true;
  await reader.read(1); // subnegotiation version 1
  const user = (await reader.read((await reader.read(1))[0] ?? 0)).toString();
  const password = (await reader.read((await reader.read(1))[0] ?? 0)).toString();
  const ok = user === options.username && password === (options.password ?? "");
  client.write(Buffer.from([1, ok ? 0 : 1]));
  if (!ok) client.end();
  return ok;
}

/** A SOCKS5 server (CONNECT only); with credentials it insists on username/password. */
export async function startSocks5Proxy(options: ProxyOptions = {}): Promise<TestProxy> {
  const sockets = new Set<Socket>();
  const server = createServer();
  const proxy: TestProxy = { url: "", tunnels: [], refused: 0, close: closer(server, sockets) };
  const reply = (code: number) => Buffer.from([SOCKS_VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0]);
  server.on("connection", async (client: Socket) => {
    client.on("error", () => {});
    const reader = new Reader(client);
    if (!(await socksAuthenticated(reader, client, options))) {
      proxy.refused++;
      return;
    }
    const destination = await socksDestination(reader);
    if (!destination) {
      client.end(reply(7));
      return;
    }
    pipeTo(
      client,
      destination,
      reader.release(),
      () => {
        proxy.tunnels.push(destination);
        client.write(reply(0));
      },
      () => client.end(reply(5)),
    );
  });
  const port = await listening(server, sockets);
  proxy.url = `socks5://${credentialsIn(options)}127.0.0.1:${port}`;
  return proxy;
}
