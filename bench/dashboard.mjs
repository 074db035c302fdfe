// The dashboard's pages under load, on one local stack, against two baselines measured the same way
// in the same run: the trivial GET /api/health, and the JSON the page itself reads through the API
// (so the ratio page / JSON is what server rendering plus the in-process API call costs).
//   GET /companies/:id/issues    the issue board (companies, agents, projects and issues reads; 50 issues)
//   GET /sessions                the sessions list
// All with the signed-in admin's cookie, 16 connections. A run is clean only if every request
// answered 200 (a redirect to /login would mean the cookie was not accepted).
//
//   node bench/dashboard.mjs          (or `npm run bench`)
//   BENCH_DURATION=5 node bench/dashboard.mjs
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  benchDurationSeconds,
  bootStack,
  DEFAULT_CONNECTIONS,
  isClean,
  measure,
  reportDirtyRun,
  sendAsAdmin,
  signInAdmin,
} from "./lib.mjs";

export const name = "dashboard";
const ISSUES = 50;

async function setUp(baseUrl, auth) {
  const company = await sendAsAdmin(baseUrl, auth, "POST", "/api/companies", { name: "Bench Board" });
  for (let i = 0; i < ISSUES; i++)
    await sendAsAdmin(baseUrl, auth, "POST", `/api/companies/${company.id}/issues`, {
      title: `Task ${i}`,
      status: "todo",
    });
  await sendAsAdmin(baseUrl, auth, "POST", "/api/sessions", {
    name: "Bench phone",
    sessionId: "bench-phone",
  });
  return company;
}

function row(label, run, baseline) {
  return {
    measurement: label,
    "req/s": Math.round(run.requestsPerSec),
    "p50 ms": run.p50,
    "p99 ms": run.p99,
    ratio: baseline ? Number((run.requestsPerSec / baseline.requestsPerSec).toFixed(2)) : 1,
  };
}

export async function run() {
  const duration = benchDurationSeconds();
  const stack = await bootStack();
  try {
    const { baseUrl } = stack;
    const auth = await signInAdmin(baseUrl);
    const company = await setUp(baseUrl, auth);
    const headers = { cookie: auth.cookie };
    const board = `${baseUrl}/companies/${company.id}/issues`;
    const boardJson = `${baseUrl}/api/companies/${company.id}/issues`;

    console.error("warm-up (discarded)");
    for (const url of [`${baseUrl}/api/health`, board, boardJson, `${baseUrl}/sessions`])
      await measure({ url, headers, duration: 1 });

    console.error(`measuring (${duration} s each, ${DEFAULT_CONNECTIONS} connections)`);
    const trivial = await measure({ url: `${baseUrl}/api/health`, duration });
    const json = await measure({ url: boardJson, headers, duration });
    const page = await measure({ url: board, headers, duration });
    const sessionsJson = await measure({ url: `${baseUrl}/api/sessions`, headers, duration });
    const sessions = await measure({ url: `${baseUrl}/sessions`, headers, duration });

    console.table([
      row("GET /api/health (trivial baseline)", trivial),
      row("GET /api/companies/:id/issues (JSON)", json, trivial),
      row("GET /companies/:id/issues (board page)", page, trivial),
      row("GET /api/sessions (JSON)", sessionsJson, trivial),
      row("GET /sessions (page)", sessions, trivial),
    ]);
    const boardVsJson = page.requestsPerSec / json.requestsPerSec;
    const sessionsVsJson = sessions.requestsPerSec / sessionsJson.requestsPerSec;
    console.log(
      `board page / its JSON: ${boardVsJson.toFixed(2)}; sessions page / its JSON: ${sessionsVsJson.toFixed(2)} ` +
        "(the cost of rendering HTML and calling the API in-process)",
    );
    const runs = [trivial, json, page, sessionsJson, sessions];
    const clean = runs.every(isClean);
    if (!clean) {
      reportDirtyRun("dashboard bench", {
        non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
        errors: runs.reduce((sum, r) => sum + r.errors, 0),
        total: runs.reduce((sum, r) => sum + r.total, 0),
      });
    }
    return { name, clean, trivial, json, page, sessionsJson, sessions, boardVsJson, sessionsVsJson };
  } finally {
    await stack.stop();
  }
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const summary = await run();
  if (!summary.clean) process.exitCode = 1;
}
