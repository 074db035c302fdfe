// MCP against REST on one local stack (issue 27), with the official SDK client over real HTTP and an
// agent key, each operation measured both ways in the same run, interleaved call by call (the order
// alternating), so drift and other load fall on both alike:
//   (a) read an issue as get_issue answers it, with its comments: tools/call get_issue  vs  the two
//       REST calls a REST client makes for the same (GET /api/issues/:id and …/comments, in parallel,
//       as the tool makes them)
//   (a') a read that is one REST call: tools/call list_approvals  vs  GET /api/companies/:id/approvals
//   (b) check out a fresh todo issue: tools/call checkout_issue  vs  POST /api/issues/:id/checkout
// plus MCP ping (a JSON-RPC round trip that runs no tool: /mcp's own cost, key and session checks
// included) beside GET /api/health. All sequential on keep-alive connections.
// Then workerd's CPU per call, each kind in a block of its own (tools/list too): latency on a busy
// machine swings with other load, CPU much less, and it says whether the gap is the Worker's or the
// client's and the wire's.
// Target: MCP p50 <= 1.5 × REST p50 for (a), (a') and (b) (printed as met or NOT met).
// Sessions held: when /mcp issues an Mcp-Session-Id, it opens BENCH_MCP_SESSIONS (200) sessions and
// keeps them open, then reports initialize p50/p95, workerd's RSS growth per session held, that every
// held session still answers, and RSS after they are deleted. With a stateless server it reports that
// no session is issued.
//
//   node bench/mcp.mjs          (or `npm run bench`)
//   BENCH_MCP_CALLS=100 BENCH_MCP_SESSIONS=50 node bench/mcp.mjs
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createIssues, setUp } from "./control.mjs";
import { bootStack, createAdminApiKey } from "./lib.mjs";
import { now, percentile, sleep } from "./support/common.mjs";
import { workerdCpuMs, workerdRssKib } from "./support/workerd-usage.mjs";

export const name = "mcp";
export const TARGET_MCP_TO_REST_P50 = 1.5;
const WARMUP_CALLS = 20;
const CPU_CALLS = 200;
const IDLE_SAMPLE_MS = 3_000;

const envCount = (variable, fallback) => {
  const value = Number(process.env[variable]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
};
const CALLS = envCount("BENCH_MCP_CALLS", 200);
const SESSIONS = envCount("BENCH_MCP_SESSIONS", 200);

/** An SDK client connected to /mcp with the agent's key (initialize + notifications/initialized). */
async function connectMcp(baseUrl, headers) {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    requestInit: { headers },
  });
  const client = new Client({ name: "switchboard-bench", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** Each side's call returns true when it answered as expected. */
async function restCall(baseUrl, method, route, headers, body) {
  const response = await fetch(`${baseUrl}${route}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await response.text();
  return response.status === 200;
}

/** What get_issue answers, the REST way: the issue and its first page of comments, in parallel. */
async function restIssueWithComments(baseUrl, issueId, headers) {
  const answers = await Promise.all([
    restCall(baseUrl, "GET", `/api/issues/${issueId}`, headers),
    restCall(baseUrl, "GET", `/api/issues/${issueId}/comments?limit=50`, headers),
  ]);
  return answers.every(Boolean);
}

async function toolCall(client, toolName, args) {
  const result = await client.callTool({ name: toolName, arguments: args });
  return !result.isError;
}

async function pingCall(client) {
  await client.ping();
  return true;
}

function summary(latencies, failures) {
  return {
    count: latencies.length,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    failures,
  };
}

/** `count` rounds of `sides` (name → call(i)), the order alternating each round; latency per call. */
async function interleaved(count, sides) {
  const names = Object.keys(sides);
  const latencies = Object.fromEntries(names.map((side) => [side, []]));
  const failures = Object.fromEntries(names.map((side) => [side, 0]));
  for (let i = 0; i < count; i++) {
    const order = i % 2 === 0 ? names : [...names].reverse();
    for (const side of order) {
      const t0 = now();
      const ok = await sides[side](i);
      latencies[side].push(now() - t0);
      if (!ok) failures[side]++;
    }
  }
  return Object.fromEntries(names.map((side) => [side, summary(latencies[side], failures[side])]));
}

async function freshIssues(baseUrl, board, companyId, count) {
  const { ids } = await createIssues(baseUrl, board, companyId, count);
  if (ids.length !== count) throw new Error(`only ${ids.length} of ${count} issues created`);
  return ids;
}

/** (a), (b) and ping, each interleaved with its REST counterpart; warm-up rounds discarded. */
async function measureCalls(baseUrl, cast, client) {
  const { board, company, agent } = cast;
  const readIds = await freshIssues(baseUrl, board, company.id, 50);
  const read = (rounds) =>
    interleaved(rounds, {
      mcp: (i) => toolCall(client, "get_issue", { issueId: readIds[i % readIds.length] }),
      rest: (i) => restIssueWithComments(baseUrl, readIds[i % readIds.length], agent.headers),
    });
  const list = (rounds) =>
    interleaved(rounds, {
      mcp: () => toolCall(client, "list_approvals", {}),
      rest: () => restCall(baseUrl, "GET", `/api/companies/${company.id}/approvals`, agent.headers),
    });
  const overhead = (rounds) =>
    interleaved(rounds, {
      mcp: () => pingCall(client),
      rest: () => restCall(baseUrl, "GET", "/api/health", {}),
    });
  const checkout = async (rounds) => {
    const mcpIds = await freshIssues(baseUrl, board, company.id, rounds);
    const restIds = await freshIssues(baseUrl, board, company.id, rounds);
    return interleaved(rounds, {
      mcp: (i) => toolCall(client, "checkout_issue", { issueId: mcpIds[i], expectedStatuses: ["todo"] }),
      rest: (i) =>
        restCall(baseUrl, "POST", `/api/issues/${restIds[i]}/checkout`, agent.headers, {
          agentId: agent.id,
          expectedStatuses: ["todo"],
        }),
    });
  };

  console.error(`warm-up (${WARMUP_CALLS} rounds each, discarded)`);
  await read(Math.max(WARMUP_CALLS, readIds.length));
  await list(WARMUP_CALLS);
  await overhead(WARMUP_CALLS);
  await checkout(WARMUP_CALLS);
  console.error(`measuring ${CALLS} interleaved rounds of each operation`);
  return {
    read: await read(CALLS),
    list: await list(CALLS),
    checkout: await checkout(CALLS),
    ping: await overhead(CALLS),
  };
}

/**
 * workerd CPU ms per call for each kind of call, run CPU_CALLS times in a block of its own, less the
 * CPU workerd spends meanwhile when idle (the runner's and the bridge's polls), measured first.
 */
async function measureCpu(baseUrl, cast, client, stackPid) {
  if (workerdCpuMs(stackPid) === null) return null;
  const ids = await freshIssues(baseUrl, cast.board, cast.company.id, 20);
  const idleStart = workerdCpuMs(stackPid);
  await sleep(IDLE_SAMPLE_MS);
  const idleMsPerMs = (workerdCpuMs(stackPid) - idleStart) / IDLE_SAMPLE_MS;
  const kinds = {
    "tools/call get_issue": (i) => toolCall(client, "get_issue", { issueId: ids[i % ids.length] }),
    "GET issue + comments": (i) => restIssueWithComments(baseUrl, ids[i % ids.length], cast.agent.headers),
    "tools/call list_approvals": () => toolCall(client, "list_approvals", {}),
    "GET …/approvals": () =>
      restCall(baseUrl, "GET", `/api/companies/${cast.company.id}/approvals`, cast.agent.headers),
    "MCP ping": () => pingCall(client),
    "GET /api/health": () => restCall(baseUrl, "GET", "/api/health", {}),
    "tools/list": async () => (await client.listTools()).tools.length > 0,
  };
  const perCall = {};
  for (const [kind, callOnce] of Object.entries(kinds)) {
    for (let i = 0; i < ids.length; i++) await callOnce(i);
    const before = workerdCpuMs(stackPid);
    const startedAt = now();
    for (let i = 0; i < CPU_CALLS; i++) await callOnce(i);
    const background = idleMsPerMs * (now() - startedAt);
    perCall[kind] = (workerdCpuMs(stackPid) - before - background) / CPU_CALLS;
  }
  return { idleMsPerSecond: idleMsPerMs * 1000, perCall };
}

/**
 * Opens SESSIONS sessions and holds them: what each costs the stack, and that they all still work.
 * Exported so it can be pointed at any server that issues sessions (it was tried on the SDK's own
 * stateful Node transport before /mcp had sessions).
 */
export async function measureSessions(baseUrl, headers, stackPid, issueId) {
  const rssBefore = workerdRssKib(stackPid);
  const held = [];
  const initialize = [];
  for (let i = 0; i < SESSIONS; i++) {
    const t0 = now();
    held.push(await connectMcp(baseUrl, headers));
    initialize.push(now() - t0);
  }
  const rssHeld = workerdRssKib(stackPid);
  let answering = 0;
  for (const { client } of held) {
    if (await toolCall(client, "get_issue", { issueId })) answering++;
  }
  const distinct = new Set(held.map(({ transport }) => transport.sessionId)).size;
  for (const { client, transport } of held) {
    await transport.terminateSession();
    await client.close();
  }
  const rssAfterDelete = workerdRssKib(stackPid);
  const perSessionKib = rssBefore && rssHeld ? (rssHeld - rssBefore) / SESSIONS : null;
  return {
    sessionsIssued: true,
    sessions: SESSIONS,
    distinctSessionIds: distinct,
    answering,
    initialize: summary(initialize, 0),
    workerdRssKib: { before: rssBefore, held: rssHeld, afterDelete: rssAfterDelete },
    rssPerSessionKib: perSessionKib,
  };
}

const fixed = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");

function printCpu(cpu) {
  if (!cpu) return console.log("workerd CPU per call: not measured (no workerd found in /proc)");
  console.log(
    `workerd CPU per call (${CPU_CALLS} calls of each in a block of their own, less its idle ` +
      `${fixed(cpu.idleMsPerSecond)} ms/s):`,
  );
  for (const [kind, ms] of Object.entries(cpu.perCall))
    console.log(`  ${kind.padEnd(28)} ${fixed(ms, 2)} ms`);
  const ratio = (tool, rest) => fixed(cpu.perCall[tool] / cpu.perCall[rest], 2);
  console.log(`  get_issue / GET issue + comments: ${ratio("tools/call get_issue", "GET issue + comments")}`);
  console.log(`  list_approvals / GET …/approvals: ${ratio("tools/call list_approvals", "GET …/approvals")}`);
}

function printReport(calls, ratios, sessions) {
  const row = (label, mcp, rest, ratio) => ({
    operation: label,
    "MCP p50 ms": fixed(mcp.p50),
    "MCP p95 ms": fixed(mcp.p95),
    "REST p50 ms": fixed(rest.p50),
    "REST p95 ms": fixed(rest.p95),
    "MCP/REST p50": fixed(ratio, 2),
    failures: mcp.failures + rest.failures,
  });
  console.table([
    row("(a) get_issue vs GET issue + comments", calls.read.mcp, calls.read.rest, ratios.read),
    row("(a') list_approvals vs GET …/approvals", calls.list.mcp, calls.list.rest, ratios.list),
    row("(b) checkout_issue vs POST …/checkout", calls.checkout.mcp, calls.checkout.rest, ratios.checkout),
    row("    MCP ping vs GET /api/health", calls.ping.mcp, calls.ping.rest, ratios.ping),
  ]);
  console.log(`(${CALLS} interleaved rounds each, sequential, SDK client and fetch over loopback HTTP)`);
  for (const [label, ratio] of [
    ["(a) read an issue", ratios.read],
    ["(a') read a list", ratios.list],
    ["(b) checkout", ratios.checkout],
  ]) {
    const met = ratio <= TARGET_MCP_TO_REST_P50;
    console.log(
      `${label}: MCP/REST p50 ${fixed(ratio, 2)} (target <= ${TARGET_MCP_TO_REST_P50}: ${met ? "met" : "NOT met"})`,
    );
  }
  if (!sessions.sessionsIssued) {
    console.log(
      "sessions held: /mcp issued no Mcp-Session-Id (stateless server): nothing to hold or measure",
    );
    return;
  }
  const rss = sessions.workerdRssKib;
  console.log(
    `sessions held: ${sessions.sessions} opened (${sessions.distinctSessionIds} distinct ids), ` +
      `${sessions.answering} answered a tool call while all were held; initialize p50 ` +
      `${fixed(sessions.initialize.p50)} ms, p95 ${fixed(sessions.initialize.p95)} ms; workerd RSS ` +
      `${rss.before ?? "?"} → ${rss.held ?? "?"} KiB (${fixed(sessions.rssPerSessionKib)} KiB per session), ` +
      `${rss.afterDelete ?? "?"} KiB after DELETE`,
  );
}

export async function run() {
  const stack = await bootStack();
  try {
    const { baseUrl } = stack;
    const { board, company, agents } = await setUp(baseUrl, await createAdminApiKey(baseUrl));
    const cast = { board, company, agent: agents[0] };
    const { client, transport } = await connectMcp(baseUrl, cast.agent.headers);
    const calls = await measureCalls(baseUrl, cast, client);
    const ratios = {
      read: calls.read.mcp.p50 / calls.read.rest.p50,
      list: calls.list.mcp.p50 / calls.list.rest.p50,
      checkout: calls.checkout.mcp.p50 / calls.checkout.rest.p50,
      ping: calls.ping.mcp.p50 / calls.ping.rest.p50,
    };
    console.error(`workerd CPU per call (${CPU_CALLS} of each)`);
    const cpu = await measureCpu(baseUrl, cast, client, stack.pid);
    const [sampleIssue] = await freshIssues(baseUrl, board, company.id, 1);
    const sessions = transport.sessionId
      ? await measureSessions(baseUrl, cast.agent.headers, stack.pid, sampleIssue)
      : { sessionsIssued: false };
    await client.close();
    printReport(calls, ratios, sessions);
    printCpu(cpu);
    const failures = Object.values(calls).reduce((sum, op) => sum + op.mcp.failures + op.rest.failures, 0);
    const sessionsClean =
      !sessions.sessionsIssued ||
      (sessions.answering === SESSIONS && sessions.distinctSessionIds === SESSIONS);
    return {
      name,
      clean: failures === 0 && sessionsClean,
      meetsTarget: [ratios.read, ratios.list, ratios.checkout].every(
        (ratio) => ratio <= TARGET_MCP_TO_REST_P50,
      ),
      target: TARGET_MCP_TO_REST_P50,
      calls: CALLS,
      ...calls,
      ratios,
      workerdCpuMsPerCall: cpu,
      sessions,
    };
  } finally {
    await stack.stop();
  }
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const summary = await run();
  if (!summary.clean) process.exitCode = 1;
}
