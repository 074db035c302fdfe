/**
 * The edge's media endpoints as a real HTTP server on 127.0.0.1 that records what reaches it: every
 * request's method, path, query, headers and body (size and SHA-256, not the bytes: a test moves
 * hundreds of MB through it). It speaks the parts protocol (mediaPartsPath) and serves generated
 * uploads for sends; `refuse` makes it answer a chosen request with an error status.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

export interface RecordedRequest {
  method: string;
  /** The path after `/bridge/v1/sessions/{sid}/media/`: `ref`, `ref/parts`, `ref/parts/3`, … */
  path: string;
  uploadId: string | null;
  headers: IncomingMessage["headers"];
  size: number;
  sha256: string;
  /** The body as text when it is JSON (complete's part list). */
  json?: unknown;
}

/** An upload the edge holds for a send: its bytes are made on each GET. */
export interface ServedUpload {
  body: () => Readable;
  mimetype: string;
  fileName?: string;
  /** Sent as Content-Length when given (a lie, if a test wants one). */
  length?: number;
}

export interface RecordingEdge {
  origin: string;
  token: string;
  readonly requests: RecordedRequest[];
  readonly uploads: Map<string, ServedUpload>;
  /** Answers the matching request with this status instead. */
  refuse: ((request: RecordedRequest) => number | undefined) | null;
  /** The SHA-256 of the bytes the edge now holds for `ref` (one PUT, or completed parts in order). */
  stored(ref: string): { size: number; sha256: string } | undefined;
  close(): Promise<void>;
}

const PREFIX = /^\/bridge\/v1\/sessions\/[^/]+\/media\/(.+)$/;

export async function startRecordingEdge(uploadId = "upload/1+α"): Promise<RecordingEdge> {
  const token = "edge-token";
  const requests: RecordedRequest[] = [];
  const uploads = new Map<string, ServedUpload>();
  const stored = new Map<string, { size: number; sha256: string }>();
  /** Running hash of a multipart upload's parts, as they arrive in order. */
  const assembling = new Map<string, { hash: ReturnType<typeof createHash>; size: number }>();
  const edge: RecordingEdge = {
    origin: "",
    token,
    requests,
    uploads,
    refuse: null,
    stored: (ref) => stored.get(ref),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  /** The running hash a part's bytes also go into: the whole file's, as its parts arrive in order. */
  const runningFor = (ref: string) => {
    const running = assembling.get(ref) ?? { hash: createHash("sha256"), size: 0 };
    assembling.set(ref, running);
    return running;
  };

  const record = async (req: IncomingMessage, path: string, url: URL) => {
    const hash = createHash("sha256");
    const [ref = "", parts, step] = path.split("/");
    const running = req.method === "PUT" && parts === "parts" && step ? runningFor(ref) : undefined;
    let size = 0;
    let text = "";
    for await (const chunk of req) {
      hash.update(chunk as Buffer);
      running?.hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (running) running.size += (chunk as Buffer).length;
      if (text.length < 65_536) text += (chunk as Buffer).toString();
    }
    const request: RecordedRequest = {
      method: req.method ?? "",
      path,
      uploadId: url.searchParams.get("uploadId"),
      headers: req.headers,
      size,
      sha256: hash.digest("hex"),
      ...(req.headers["content-type"] === "application/json" ? { json: JSON.parse(text) as unknown } : {}),
    };
    requests.push(request);
    return request;
  };

  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://edge");
    const path = PREFIX.exec(url.pathname)?.[1];
    if (!path || req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
    const [ref = "", parts, step] = path.split("/");
    if (req.method === "GET") {
      const upload = uploads.get(ref);
      requests.push({ method: "GET", path, uploadId: null, headers: req.headers, size: 0, sha256: "" });
      if (!upload) return void res.writeHead(404).end();
      const headers: Record<string, string> = { "content-type": upload.mimetype };
      if (upload.fileName) headers["x-file-name"] = encodeURIComponent(upload.fileName);
      if (upload.length !== undefined) headers["content-length"] = String(upload.length);
      res.writeHead(200, headers);
      return pipeline(upload.body(), res).catch(() => undefined);
    }
    const request = await record(req, path, url);
    const refused = edge.refuse?.(request);
    if (refused) return void res.writeHead(refused).end("refused");
    const json = (body: unknown) =>
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (!parts && req.method === "PUT") {
      stored.set(ref, { size: request.size, sha256: request.sha256 });
      return void res.writeHead(204).end();
    }
    if (parts !== "parts") return void res.writeHead(404).end();
    if (req.method === "POST" && step === undefined) return json({ uploadId });
    if (request.uploadId !== uploadId) return void res.writeHead(404).end();
    if (req.method === "PUT" && step) return json({ etag: `"etag-${step}-${request.sha256.slice(0, 8)}"` });
    if (req.method === "POST" && step === "complete") {
      const running = assembling.get(ref);
      if (running) stored.set(ref, { size: running.size, sha256: running.hash.digest("hex") });
      return void res.writeHead(204).end();
    }
    if (req.method === "DELETE") return void res.writeHead(204).end();
    res.writeHead(405).end();
  };

  const server = createServer((req, res) => {
    answer(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  edge.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return edge;
}
