// Events replay rate from a cursor (issue 33): a consumer reading 10,000 events from cursor 0, a
// session's (its event log in the session's Durable Object) and a company's (its activity log in D1),
// page by page (`limit` 1000, following `next`; the company's at 200 too) and over the stream
// WebSocket (replay from 0 until the last event arrives). Reported as events/s and as a ratio to a baseline in the same run: the same
// 10,000 activity rows read through the plain activity list (`GET /companies/{id}/activity`, its
// largest page of 200, following X-Next-Cursor). No timed assertions: the ratios are the result.
//
// Both logs are seeded in bulk while the stack is stopped (the sqlite3 CLI on its state files, as
// bench/issues-scale.mjs does): 10,000 writes through the API would measure the writes, not the reads.
//
//   node bench/events-replay.mjs          (or `npm run bench`)
//   BENCH_EVENTS=10000 BENCH_EVENTS_ROUNDS=3 node bench/events-replay.mjs
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { bootStack, createAdminApiKey, sendAsAdmin, signInAdmin } from "./lib.mjs";

export const name = "events-replay";
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_EVENTS_ROUNDS ?? 3);
const PAGE = 1000;
const ACTIVITY_PAGE = 200;
const SESSION = "bench-events";

/** The state files under `dir` (recursively) whose SQLite database has table `table`. */
function sqliteFilesWith(dir, table) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".sqlite")) continue;
    const full = path.join(entry.parentPath, entry.name);
    const hit = execFileSync("sqlite3", [full, `SELECT name FROM sqlite_master WHERE name = '${table}'`]);
    if (String(hit).trim() === table) found.push(full);
  }
  return found;
}

const countIn = (file, query) => Number(String(execFileSync("sqlite3", [file, query])).trim());

/** A payload of about the size of a text message's `message.received` (and of an activity's details). */
const PAYLOAD_SQL = `json_object('id', 'BENCH' || n.i, 'from', '628111000222@s.whatsapp.net', 'chatId',
  '628111000222@s.whatsapp.net', 'type', 'text', 'content', 'Benchmark message number ' || n.i,
  'pushName', 'Bench Peer', 'fromMe', json('false'), 'isGroup', json('false'), 'timestamp', 1795900000 + n.i)`;

function seedSessionLog(stateDir) {
  const [file, ...others] = sqliteFilesWith(path.join(stateDir, "v3", "do"), "outbox");
  if (!file || others.length > 0) throw new Error(`expected one session object, found ${others.length + 1}`);
  execFileSync("sqlite3", [file], {
    input: `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${EVENTS})
      INSERT INTO outbox (event, data, created_at)
      SELECT 'message.received', ${PAYLOAD_SQL}, ${Date.now()} + n.i FROM n;`,
  });
  const seeded = countIn(file, "SELECT count(*) FROM outbox");
  if (seeded < EVENTS) throw new Error(`seeded ${seeded} session events, not ${EVENTS}`);
}

function seedCompanyLog(stateDir, companyId) {
  const [file] = sqliteFilesWith(path.join(stateDir, "v3", "d1"), "activity_log");
  if (!file) throw new Error("no D1 database with an activity_log table");
  const existing = countIn(file, `SELECT count(*) FROM activity_log WHERE company_id = '${companyId}'`);
  execFileSync("sqlite3", [file], {
    input: `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${EVENTS - existing})
      INSERT INTO activity_log (seq, id, company_id, actor_type, actor_id, action, entity_type, entity_id,
        details, created_at)
      SELECT NULL, 'bench-' || n.i, '${companyId}', t.actor_type, t.actor_id, 'issue.updated', 'issue',
        t.entity_id, ${PAYLOAD_SQL}, t.created_at + n.i
      FROM n, (SELECT * FROM activity_log WHERE company_id = '${companyId}' LIMIT 1) t;`,
  });
  const seeded = countIn(file, `SELECT count(*) FROM activity_log WHERE company_id = '${companyId}'`);
  if (seeded !== EVENTS) throw new Error(`seeded ${seeded} company events, not ${EVENTS}`);
}

/** A session and a company with a first event each made through the API, then both logs filled in bulk. */
async function seed() {
  const first = await bootStack({ BRIDGE: "0", RUNNER: "0" });
  try {
    const auth = await signInAdmin(first.baseUrl);
    await sendAsAdmin(first.baseUrl, auth, "POST", "/api/sessions", { name: SESSION, sessionId: SESSION });
    // Reading the log once makes the session's object and its tables.
    const touched = await fetch(`${first.baseUrl}/api/sessions/${SESSION}/events?after=0`, {
      headers: { cookie: auth.cookie },
    });
    if (touched.status !== 200) throw new Error(`session events: ${touched.status} ${await touched.text()}`);
    const company = await sendAsAdmin(first.baseUrl, auth, "POST", "/api/companies", {
      name: "Events bench",
    });
    await sendAsAdmin(first.baseUrl, auth, "POST", `/api/companies/${company.id}/issues`, { title: "Seed" });
    await first.stop({ keepState: true });
    console.error(`seeding ${EVENTS} session events and ${EVENTS} company events`);
    seedSessionLog(first.stateDir);
    seedCompanyLog(first.stateDir, company.id);
    return { stateDir: first.stateDir, companyId: company.id };
  } catch (error) {
    await first.stop();
    throw error;
  }
}

async function getJson(url, key) {
  const response = await fetch(url, { headers: { "X-API-Key": key } });
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
  return { body: await response.json(), headers: response.headers };
}

/** Every event from cursor 0 following `next`, `limit` a page: the ids in order (checked, not timed). */
async function readLog(url, key, limit = PAGE) {
  const ids = [];
  for (let after = "0"; ; ) {
    const { body } = await getJson(`${url}?after=${after}&limit=${limit}`, key);
    if (body.data.events.length === 0) return ids;
    for (const event of body.data.events) ids.push(event.id);
    after = body.data.next;
  }
}

/** The baseline: the same rows through the activity list, newest first, 200 a page. */
async function readActivityList(baseUrl, companyId, key) {
  const ids = [];
  for (let before = null; ; ) {
    const query = `limit=${ACTIVITY_PAGE}${before === null ? "" : `&before=${before}`}`;
    const { body, headers } = await getJson(`${baseUrl}/api/companies/${companyId}/activity?${query}`, key);
    for (const entry of body) ids.push(entry.id);
    before = headers.get("X-Next-Cursor");
    if (before === null) return ids;
  }
}

/** The stream from cursor 0 until `count` events arrived; the ids in order. */
function replayStream(url, key, count) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${url.replace(/^http/, "ws")}?after=0`, { headers: { "X-API-Key": key } });
    const ids = [];
    socket.on("message", (data) => {
      ids.push(JSON.parse(String(data)).id);
      if (ids.length === count) {
        socket.close();
        resolve(ids);
      }
    });
    socket.once("unexpected-response", (_request, response) =>
      reject(new Error(`upgrade: ${response.statusCode}`)),
    );
    socket.once("error", reject);
  });
}

/** The median of ROUNDS timed reads; each must see every event once (else the run is dirty). */
async function timed(label, read) {
  const durations = [];
  let clean = true;
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    const ids = await read();
    durations.push(performance.now() - started);
    if (ids.length !== EVENTS || new Set(ids).size !== EVENTS) {
      console.error(`${label}: read ${ids.length} (${new Set(ids).size} distinct), expected ${EVENTS}`);
      clean = false;
    }
  }
  const ms = [...durations].sort((a, b) => a - b)[Math.floor(durations.length / 2)];
  return { label, ms: Number(ms.toFixed(1)), eventsPerSec: Math.round((EVENTS / ms) * 1000), clean };
}

export async function run() {
  const { stateDir, companyId } = await seed();
  const stack = await bootStack({ BRIDGE: "0", RUNNER: "0" }, { stateDir });
  try {
    const { baseUrl } = stack;
    const key = await createAdminApiKey(baseUrl);
    const sessionUrl = `${baseUrl}/api/sessions/${SESSION}/events`;
    const companyUrl = `${baseUrl}/api/companies/${companyId}/events`;
    console.error("warm-up (discarded)");
    await readLog(sessionUrl, key);
    await readLog(companyUrl, key);
    await readActivityList(baseUrl, companyId, key);
    console.error(`measuring (${ROUNDS} rounds each, median)`);
    const baseline = await timed("baseline: activity list, 200 a page", () =>
      readActivityList(baseUrl, companyId, key),
    );
    const results = [
      baseline,
      await timed(`session events, ${PAGE} a page`, () => readLog(sessionUrl, key)),
      await timed(`company events, ${PAGE} a page`, () => readLog(companyUrl, key)),
      // The baseline's page size: the same rows, the same number of requests.
      await timed(`company events, ${ACTIVITY_PAGE} a page`, () => readLog(companyUrl, key, ACTIVITY_PAGE)),
      await timed("session stream replay", () => replayStream(`${sessionUrl}/stream`, key, EVENTS)),
      await timed("company stream replay", () => replayStream(`${companyUrl}/stream`, key, EVENTS)),
    ];
    const rows = results.map((r) => ({
      measurement: r.label,
      "ms for all": r.ms,
      "events/s": r.eventsPerSec,
      "× baseline": Number((r.eventsPerSec / baseline.eventsPerSec).toFixed(2)),
    }));
    console.table(rows);
    const clean = results.every((r) => r.clean);
    return { name, clean, events: EVENTS, rounds: ROUNDS, results: rows };
  } finally {
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const summary = await run();
  if (!summary.clean) process.exitCode = 1;
}
