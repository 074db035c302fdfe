// Where a write's CPU goes (issue 31): a V8 CPU profile of the Worker's isolate in workerd, taken
// through its inspector while one workload runs alone, for each of: issue read (from the IssueDO's
// memory, the baseline), create, comment, status update with a comment, checkout. Prints per
// workload the sampled JavaScript time per request (idle excluded; SQLite and the runtime's own C++
// are not JavaScript and show as "(program)") and the functions that took it, by self time.
// The figures are the isolate's, not the machine's: run beside nothing else for stable numbers.
//
//   node bench/profile-writes.mjs              (not part of `npm run bench`: a diagnostic)
//   PROFILE_REQUESTS=300 PROFILE_TOP=20 node bench/profile-writes.mjs
import { createIssues, setUp } from "./control.mjs";
import { bootStack, createAdminApiKey, findFreePort } from "./lib.mjs";
import { inspector } from "./support/inspector.mjs";

const REQUESTS = Number(process.env.PROFILE_REQUESTS ?? 200);
const TOP = Number(process.env.PROFILE_TOP ?? 12);
const NOT_JAVASCRIPT = new Set(["(idle)", "(program)", "(garbage collector)", "(root)"]);

/** The inspector target of the Worker's own isolate (not Miniflare's internal services). */
async function workerTarget(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const target = targets.find((entry) => /switchboard/i.test(entry.title ?? "")) ?? targets[0];
  if (!target) throw new Error(`no inspector target on ${port}`);
  return target.webSocketDebuggerUrl ?? `ws://127.0.0.1:${port}/${target.id}`;
}

/** Self time per function (µs) from a profile's samples and time deltas. */
function selfTimes(profile) {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map();
  profile.samples.forEach((nodeId, index) => {
    const frame = byNode.get(nodeId)?.callFrame;
    if (!frame) return;
    const file = frame.url ? frame.url.split("/").at(-1) : "";
    const key = frame.url
      ? `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`
      : frame.functionName;
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  return totals;
}

async function profiled(client, label, work) {
  await client.send("Profiler.start");
  await work();
  const { profile } = await client.send("Profiler.stop");
  const totals = selfTimes(profile);
  const busy = [...totals].filter(([key]) => key !== "(idle)").reduce((sum, [, us]) => sum + us, 0);
  const javascript = [...totals]
    .filter(([key]) => !NOT_JAVASCRIPT.has(key))
    .reduce((sum, [, us]) => sum + us, 0);
  console.log(
    `\n## ${label}: ${(busy / 1000 / REQUESTS).toFixed(2)} ms busy per request ` +
      `(${(javascript / 1000 / REQUESTS).toFixed(2)} ms JavaScript, the rest the runtime and GC)`,
  );
  console.log("| self ms/request | share | function |\n|---:|---:|---|");
  for (const [key, us] of [...totals]
    .filter(([k]) => k !== "(idle)")
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP))
    console.log(`| ${(us / 1000 / REQUESTS).toFixed(3)} | ${((us / busy) * 100).toFixed(1)}% | \`${key}\` |`);
  return busy / 1000 / REQUESTS;
}

async function each(count, request) {
  for (let i = 0; i < count; i++) {
    const response = await request(i);
    if (!response.ok) throw new Error(`request ${i}: HTTP ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  }
}

const json = (headers, method, body) => ({
  method,
  headers: { ...headers, "content-type": "application/json" },
  body: JSON.stringify(body),
});

async function main() {
  const inspectorPort = await findFreePort();
  const stack = await bootStack({ INSPECTOR_PORT: String(inspectorPort) });
  try {
    const base = stack.baseUrl;
    const { company, agents } = await setUp(base, await createAdminApiKey(base));
    const [agent] = agents;
    const { ids } = await createIssues(base, agent.headers, company.id, REQUESTS * 2);
    for (const id of ids)
      await (await fetch(`${base}/api/issues/${id}`, { headers: agent.headers })).arrayBuffer();
    const client = await inspector(await workerTarget(inspectorPort));
    await client.send("Profiler.enable");
    await client.send("Profiler.setSamplingInterval", { interval: 100 });
    const figures = {};
    figures.read = await profiled(client, "GET /api/issues/:id (read before)", () =>
      each(REQUESTS, (i) => fetch(`${base}/api/issues/${ids[i]}`, { headers: agent.headers })),
    );
    figures.create = await profiled(client, "POST /api/companies/:id/issues (agent)", () =>
      each(REQUESTS, (i) =>
        fetch(
          `${base}/api/companies/${company.id}/issues`,
          json(agent.headers, "POST", { title: `P ${i}`, status: "todo" }),
        ),
      ),
    );
    figures.checkout = await profiled(client, "POST /api/issues/:id/checkout", () =>
      each(REQUESTS, (i) =>
        fetch(
          `${base}/api/issues/${ids[i]}/checkout`,
          json(agent.headers, "POST", { agentId: agent.id, expectedStatuses: ["todo"] }),
        ),
      ),
    );
    figures.comment = await profiled(client, "POST /api/issues/:id/comments", () =>
      each(REQUESTS, (i) =>
        fetch(`${base}/api/issues/${ids[i]}/comments`, json(agent.headers, "POST", { body: `Note ${i}` })),
      ),
    );
    figures.update = await profiled(client, "PATCH /api/issues/:id (status + comment)", () =>
      each(REQUESTS, (i) =>
        fetch(
          `${base}/api/issues/${ids[i]}`,
          json(agent.headers, "PATCH", { status: "in_review", comment: "Ready" }),
        ),
      ),
    );
    client.close();
    console.log("\n| workload | busy ms/request | × read |\n|---|---:|---:|");
    for (const [name, ms] of Object.entries(figures))
      console.log(`| ${name} | ${ms.toFixed(2)} | ${(ms / figures.read).toFixed(1)} |`);
  } finally {
    await stack.stop();
  }
}

await main();
