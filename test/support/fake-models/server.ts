// The HTTP side every fake model API shares: a loopback server that reads each request's JSON body,
// records it, and lets the vendor module answer (or hang, as a stuck upstream does).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest<Body> {
  path: string;
  headers: IncomingMessage["headers"];
  body: Body;
}

export interface ModelRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  raw: string;
}

/** What a vendor module does with a request: answered, left hanging, or not one of its routes. */
export type Handled = "answered" | "hanging";

export interface ModelServer {
  readonly origin: string;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let raw = "";
    req.setEncoding("utf8").on("data", (chunk: string) => {
      raw += chunk;
    });
    req.on("end", () => resolve(raw));
    req.on("error", reject);
  });
}

export async function startModelServer(
  handle: (request: ModelRequest, res: ServerResponse) => Handled,
): Promise<ModelServer> {
  const hung = new Set<ServerResponse>();
  const server: Server = createServer(async (req, res) => {
    const raw = await readBody(req);
    const request = { method: req.method ?? "GET", path: req.url ?? "/", headers: req.headers, raw };
    if (handle(request, res) === "hanging") hung.add(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hung) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
