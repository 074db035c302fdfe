#!/usr/bin/env node
// A webhook receiver that runs as its own process, so tests and the bench can kill it (receiver down)
// and start it again on the same port (receiver back) like a real customer endpoint.
//
//   node test/support/webhook-receiver.mjs [port]      (port 0 or none: the OS picks one)
//
// Prints one line `{"listening":<port>}` on stdout once it accepts connections. Every request outside
// /__control is recorded (path, headers, raw body, arrival time, what it was answered) and answered as
// the path's behaviour says (default 200). Control API, on the same server:
//   GET    /__control/deliveries[?path=/x][&since=<seq>][&bodies=0]   → {deliveries: [...]}
//   GET    /__control/count[?path=/x]                                 → {count}
//   PUT    /__control/behaviour  {path, statuses?, status?, delayMs?, retryAfter?, hangUp?}
//          (hangUp: the connection is closed without an answer; recorded as answered 0)
//   DELETE /__control/deliveries                                      (forgets what was recorded)
import { createServer } from "node:http";

const port = Number(process.argv[2] ?? 0);
const CONTROL = "/__control";

/** @typedef {{ statuses: number[], status: number, delayMs: number, retryAfter: string | null, hangUp: boolean }} Behaviour */
/** @type {Map<string, Behaviour>} path → behaviour; statuses are answered first, one per request. */
const behaviours = new Map();
/** @type {Array<{ seq: number, method: string, path: string, headers: Record<string, string>, body: string, receivedAt: number, answered: number }>} */
const recorded = [];
let seq = 0;

/** Epoch milliseconds with sub-millisecond precision, comparable with the same clock in other processes. */
const preciseNow = () => performance.timeOrigin + performance.now();

function readBody(request) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

function json(response, status, value) {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
}

function flatHeaders(request) {
  /** @type {Record<string, string>} */
  const headers = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function control(request, response, url, body) {
  const route = url.pathname.slice(CONTROL.length);
  const path = url.searchParams.get("path");
  if (request.method === "GET" && route === "/deliveries") {
    const since = Number(url.searchParams.get("since") ?? 0);
    const withBodies = url.searchParams.get("bodies") !== "0";
    const deliveries = recorded
      .filter((entry) => entry.seq > since && (path === null || entry.path === path))
      .map((entry) => (withBodies ? entry : { ...entry, body: "" }));
    return json(response, 200, { deliveries });
  }
  if (request.method === "GET" && route === "/count") {
    return json(response, 200, { count: recorded.filter((e) => path === null || e.path === path).length });
  }
  if (request.method === "DELETE" && route === "/deliveries") {
    recorded.length = 0;
    return json(response, 200, { ok: true });
  }
  if (request.method === "PUT" && route === "/behaviour") {
    const spec = JSON.parse(body.toString("utf8"));
    if (typeof spec.path !== "string") return json(response, 400, { error: "path is required" });
    behaviours.set(spec.path, {
      statuses: Array.isArray(spec.statuses) ? spec.statuses.map(Number) : [],
      status: Number(spec.status ?? 200),
      delayMs: Number(spec.delayMs ?? 0),
      retryAfter: typeof spec.retryAfter === "string" ? spec.retryAfter : null,
      hangUp: spec.hangUp === true,
    });
    return json(response, 200, { ok: true });
  }
  return json(response, 404, { error: `no control route ${request.method} ${route}` });
}

async function handle(request, response) {
  const receivedAt = preciseNow();
  const url = new URL(request.url ?? "/", "http://receiver.invalid");
  const body = await readBody(request);
  if (url.pathname.startsWith(CONTROL)) return control(request, response, url, body);

  const behaviour = behaviours.get(url.pathname);
  const answered = behaviour?.hangUp ? 0 : (behaviour?.statuses.shift() ?? behaviour?.status ?? 200);
  recorded.push({
    seq: ++seq,
    method: request.method ?? "GET",
    path: url.pathname,
    headers: flatHeaders(request),
    body: body.toString("utf8"),
    receivedAt,
    answered,
  });
  if (behaviour?.hangUp) return request.socket.destroy();
  if (behaviour?.delayMs) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
  const headers = { "content-type": "text/plain" };
  if (behaviour?.retryAfter) headers["retry-after"] = behaviour.retryAfter;
  response.writeHead(answered, headers).end(answered < 300 ? "ok" : "no");
}

const server = createServer((request, response) => {
  handle(request, response).catch((error) => {
    if (!response.headersSent) json(response, 500, { error: String(error) });
  });
});
// Deliveries come over keep-alive connections; an idle one must not outlive a test's expectations.
server.keepAliveTimeout = 5_000;
server.listen(port, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ listening: typeof address === "object" ? address?.port : 0 })}\n`);
});
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => process.exit(0));
