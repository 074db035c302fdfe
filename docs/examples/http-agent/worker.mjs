// An HTTP agent for Switchboard that runs as a Cloudflare Worker (docs/control-plane.md, "The http
// adapter"). Switchboard wakes it with a signed POST; it checks the signature, checks out the issue,
// comments and answers 200 with its result. The tests import this file, so the documented code is the
// tested code. Plain WebCrypto and fetch: it runs in workerd as it is.

const TOLERANCE_SECONDS = 5 * 60;
const encoder = new TextEncoder();

function signingKey(secret) {
  if (!secret.startsWith("whsec_")) return encoder.encode(secret);
  return Uint8Array.from(atob(secret.slice(6)), (c) => c.charCodeAt(0));
}

async function expectedSignature(secret, id, timestamp, body) {
  const key = await crypto.subtle.importKey(
    "raw",
    signingKey(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, encoder.encode(`${id}.${timestamp}.${body}`)),
  );
  return btoa(String.fromCharCode(...mac));
}

/** Constant-time string comparison (same length strings; a length mismatch is already a mismatch). */
function sameString(a, b) {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Why a wake must be refused, or null when it is genuine: a stale or missing timestamp, a signature
 * that does not match, or a message id already seen (a replay). `seen` remembers ids for the tolerance
 * window (a Map here; a Durable Object or KV in production, so every isolate shares it).
 */
export async function wakeProblem(secret, headers, body, seen, nowMs = Date.now()) {
  const id = headers.get("webhook-id") ?? "";
  const timestamp = headers.get("webhook-timestamp") ?? "";
  const signatures = headers.get("webhook-signature") ?? "";
  if (!id) return "missing webhook-id";
  if (!(Math.abs(nowMs / 1000 - Number(timestamp)) <= TOLERANCE_SECONDS)) return "stale or missing timestamp";
  const expected = await expectedSignature(secret, id, timestamp, body);
  const matches = signatures.split(" ").some((entry) => {
    const [version, signature = ""] = entry.split(",");
    return version === "v1" && sameString(signature, expected);
  });
  if (!matches) return "invalid signature";
  for (const [seenId, at] of seen) if (at < nowMs - TOLERANCE_SECONDS * 1000) seen.delete(seenId);
  if (seen.has(id)) return "replayed message id";
  seen.set(id, nowMs);
  return null;
}

async function api(wake, method, path, body) {
  const response = await fetch(`${wake.apiUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${wake.apiKey}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status}`);
  return response.json();
}

/** The agent's work for one wake: check out the issue, say so, and report the result. */
export async function work(wake) {
  if (!wake.issue) return { summary: "nothing to do: the wake names no issue", usage: null, costCents: 0 };
  await api(wake, "POST", `/issues/${wake.issue.id}/checkout`, {
    agentId: wake.agent.id,
    expectedStatuses: ["todo", "backlog", "in_progress"],
  });
  await api(wake, "POST", `/issues/${wake.issue.id}/comments`, {
    body: `Picked up by an HTTP agent (run ${wake.run.id}, woken by ${wake.run.reason}).`,
  });
  return {
    summary: `commented on ${wake.issue.id}`,
    usage: { inputTokens: 0, outputTokens: 0 },
    costCents: 0,
  };
}

/** A Worker serving one agent: `secret` is the signing secret Switchboard showed when the agent was set up. */
export function createAgent(secret, seen = new Map()) {
  return {
    async fetch(request) {
      if (request.method !== "POST") return new Response("POST only", { status: 405 });
      const body = await request.text();
      const problem = await wakeProblem(secret, request.headers, body, seen);
      if (problem) return Response.json({ error: problem }, { status: 401 });
      const result = await work(JSON.parse(body));
      return Response.json(result, { status: 200 });
    },
  };
}

let agent;
/** Deployed as a Worker: the secret comes from `wrangler secret put WAKE_SECRET`. */
export default {
  fetch(request, env) {
    agent ??= createAgent(env.WAKE_SECRET);
    return agent.fetch(request);
  },
};
