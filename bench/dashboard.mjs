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
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  benchDurationSeconds,
  bootStack,
  DEFAULT_CONNECTIONS,
  isClean,
  measure,
  reportDirtyRun,
} from "./lib.mjs";

export const name = "dashboard";
const ISSUES = 50;

async function signIn(baseUrl) {
  const login = await fetch(`${baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`);
  const { data } = await login.json();
  const cookie = login.headers
    .getSetCookie()
    .map((header) => header.split(";")[0])
    .find((pair) => pair.startsWith("web-auth.session-token="));
  if (!cookie) throw new Error("login set no session cookie");
  return { cookie, csrf: data.csrfToken };
}

async function post(baseUrl, route, auth, body) {
  const response = await fetch(`${baseUrl}${route}`, {
    method: "POST",
    headers: { cookie: auth.cookie, "X-CSRF-Token": auth.csrf, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${route}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function setUp(baseUrl, auth) {
  const company = await post(baseUrl, "/api/companies", auth, { name: "Bench Board" });
  for (let i = 0; i < ISSUES; i++)
    await post(baseUrl, `/api/companies/${company.id}/issues`, auth, { title: `Task ${i}`, status: "todo" });
  await post(baseUrl, "/api/sessions", auth, { name: "Bench phone", sessionId: "bench-phone" });
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
    const auth = await signIn(baseUrl);
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
