// The bridge's proxy tunnels (issue 29, proxy per session) against real local proxies: an HTTP CONNECT
// proxy and a SOCKS5 server, each counting the tunnels it opened. A WebSocket (what Baileys' socket is)
// and a fetch (what its media downloads are) go through them; a dead proxy or wrong credentials give an
// error that names the proxy without its credentials.
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { readProxyUrl } from "../../../bridge/src/protocol/proxy.ts";
import { fetchOptionsWith } from "../../../bridge/src/whatsapp/operations.ts";
import { openTunnel, ProxyError, proxyAgents } from "../../../bridge/src/whatsapp/proxy.ts";
import { startConnectProxy, startSocks5Proxy, type TestProxy } from "../../support/proxy-servers.ts";

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const portOf = (server: { address(): AddressInfo | string | null }) => (server.address() as AddressInfo).port;

async function echoServer(): Promise<number> {
  const server: Server = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  cleanup.push(() => new Promise((resolve) => server.close(() => resolve())));
  return portOf(server);
}

async function proxy(kind: "http" | "socks5", credentials = {}): Promise<TestProxy> {
  const started =
    kind === "http" ? await startConnectProxy(credentials) : await startSocks5Proxy(credentials);
  cleanup.push(() => started.close());
  return started;
}

const target = (url: string) => {
  const read = readProxyUrl(url);
  if ("error" in read) throw new Error(read.error);
  return read.proxy;
};

async function roundTrip(url: string, host: string, port: number): Promise<string> {
  const socket = await openTunnel(target(url), host, port);
  const echoed = new Promise<string>((resolve) => socket.once("data", (data) => resolve(String(data))));
  socket.write("ping through the tunnel");
  const answer = await echoed;
  socket.destroy();
  return answer;
}

describe("a session's proxy", () => {
  it.each(["http", "socks5"] as const)(
    "%s: a tunnel with credentials carries bytes both ways",
    async (kind) => {
      const echo = await echoServer();
      const through = await proxy(kind, { username: "gw", password: "s3cret" });
      expect(await roundTrip(through.url, "127.0.0.1", echo)).toBe("ping through the tunnel");
      expect(through.tunnels).toEqual([{ host: "127.0.0.1", port: echo }]);
    },
  );

  it("socks5h lets the proxy resolve the name; socks5 resolves it here", async () => {
    const echo = await echoServer();
    const through = await proxy("socks5");
    const remote = through.url.replace("socks5://", "socks5h://");
    expect(await roundTrip(remote, "localhost", echo)).toBe("ping through the tunnel");
    expect(await roundTrip(through.url, "localhost", echo)).toBe("ping through the tunnel");
    expect(through.tunnels.map((tunnel) => tunnel.host)).toEqual(["localhost", "127.0.0.1"]);
  });

  it.each(["http", "socks5"] as const)(
    "%s: wrong credentials are refused, named without them",
    async (kind) => {
      const echo = await echoServer();
      const through = await proxy(kind, { username: "gw", password: "s3cret" });
      const wrong = through.url.replace("s3cret", "not-it");
      const error = await openTunnel(target(wrong), "127.0.0.1", echo).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProxyError);
      const { port } = target(through.url);
      expect(String((error as Error).message)).toContain(`${kind}://127.0.0.1:${port}`);
      expect(String((error as Error).message)).not.toContain("not-it");
      expect(through.refused).toBe(1);
      expect(through.tunnels).toEqual([]);
    },
  );

  it("a dead proxy is a network failure naming the proxy", async () => {
    const gone = await proxy("socks5");
    await gone.close();
    const error = await openTunnel(target(gone.url), "127.0.0.1", 443).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as ProxyError).code).toBe("EPROXY");
    expect((error as Error).message).toBe(`proxy ${gone.url} could not be used (ECONNREFUSED)`);
  });

  it.each(["http", "socks5"] as const)("%s: the WebSocket and fetch agents go through it", async (kind) => {
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
    wss.on("connection", (ws) => ws.on("message", (data) => ws.send(`echo ${String(data)}`)));
    cleanup.push(() => new Promise((resolve) => wss.close(() => resolve())));
    const web = createHttpServer((request, response) => response.end(`served ${request.url}`));
    await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", () => resolve()));
    cleanup.push(() => new Promise((resolve) => web.close(() => resolve())));
    const through = await proxy(kind);
    const socketUrl = `ws://127.0.0.1:${portOf(wss)}/ws/chat`;
    const agents = proxyAgents(target(through.url), socketUrl);
    cleanup.push(() => agents.downloads.close());

    const ws = new WebSocket(socketUrl, { agent: agents.socket });
    const answer = new Promise<string>((resolve, reject) => {
      ws.once("message", (data) => resolve(String(data)));
      ws.once("error", reject);
    });
    ws.once("open", () => ws.send("hello"));
    expect(await answer).toBe("echo hello");
    ws.close();

    const fetched = await fetch(
      `http://127.0.0.1:${portOf(web)}/mms/image/abc`,
      fetchOptionsWith(agents.downloads),
    );
    expect(await fetched.text()).toBe("served /mms/image/abc");
    expect(through.tunnels).toEqual([
      { host: "127.0.0.1", port: portOf(wss) },
      { host: "127.0.0.1", port: portOf(web) },
    ]);
  });
});
