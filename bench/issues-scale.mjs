// Lists at scale (issue 31): one company of 100,000 issues against one of 200, in the same run on one
// stack. p50 of the first page of the unfiltered issue list, a filtered list (status=todo), a text
// search (q) and the board page, each reported as a ratio 100,000 / 200; the target is ≤ 2 for each.
//
// The large company is seeded in bulk: a few issues through the API (so its rows have the real shape),
// then one INSERT … SELECT over a recursive CTE run by the sqlite3 CLI on the stack's local D1 file
// (the search index follows through its triggers). Seeding 100,000 issues through the API would take
// a quarter of an hour of Worker CPU; the reads measured here do not care how the rows were written.
//
//   node bench/issues-scale.mjs          (or `npm run bench`)
//   BENCH_DURATION=5 BENCH_SCALE_ISSUES=100000 node bench/issues-scale.mjs
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { rm } from "node:fs/promises";
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

export const name = "issues-scale";
const LARGE = Number(process.env.BENCH_SCALE_ISSUES ?? 100_000);
const SMALL = 200;
const TEMPLATE = 8;
const STATUSES = ["backlog", "todo"];
const PRIORITIES = ["critical", "high", "medium", "low"];
/** One issue in 1,000 carries this word in its title, so the search finds a page's worth at either size. */
const NEEDLE = "needle";

const titleOf = (i) => `Task ${i}${i % 1000 === 0 ? ` ${NEEDLE}` : ""}`;

/** A company with `count` issues created through the API, eight at a time. */
async function apiCompany(baseUrl, auth, label, count) {
  const company = await sendAsAdmin(baseUrl, auth, "POST", "/api/companies", { name: label });
  for (let next = 0; next < count; ) {
    const batch = Array.from({ length: Math.min(8, count - next) }, (_, i) => next + i);
    next += batch.length;
    await Promise.all(
      batch.map((i) =>
        sendAsAdmin(baseUrl, auth, "POST", `/api/companies/${company.id}/issues`, {
          title: titleOf(i),
          status: STATUSES[i % 2],
          priority: PRIORITIES[i % 4],
        }),
      ),
    );
  }
  return company;
}

/** The local D1 database file of the stack (the one holding the `issues` table). */
function d1File(stateDir) {
  const dir = path.join(stateDir, "v3", "d1", "miniflare-D1DatabaseObject");
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".sqlite"))) {
    const full = path.join(dir, file);
    const tables = execFileSync("sqlite3", [full, "SELECT name FROM sqlite_master WHERE name = 'issues'"]);
    if (String(tables).trim() === "issues") return full;
  }
  throw new Error(`no D1 database with an issues table under ${dir}`);
}

/** Rows TEMPLATE+1 … count of the company, copied from its first API-made issue with new keys. */
function bulkSeed(stateDir, companyId, count) {
  const sql = `
    WITH RECURSIVE n(i) AS (SELECT ${TEMPLATE} UNION ALL SELECT i + 1 FROM n WHERE i < ${count - 1})
    INSERT INTO issues (id, company_id, issue_number, identifier, title, status, priority, priority_rank,
      created_by_user_id, origin_exclusive, created_at, updated_at)
    SELECT 'seed-' || t.company_id || '-' || n.i, t.company_id, n.i + 1,
      substr(t.identifier, 1, instr(t.identifier, '-')) || (n.i + 1),
      'Task ' || n.i || CASE WHEN n.i % 1000 = 0 THEN ' ${NEEDLE}' ELSE '' END,
      CASE n.i % 2 WHEN 0 THEN 'backlog' ELSE 'todo' END,
      CASE n.i % 4 WHEN 0 THEN 'critical' WHEN 1 THEN 'high' WHEN 2 THEN 'medium' ELSE 'low' END,
      n.i % 4, t.created_by_user_id, 0, t.created_at + n.i, t.updated_at + n.i
    FROM n, (SELECT * FROM issues WHERE company_id = '${companyId}' ORDER BY issue_number LIMIT 1) t;
    UPDATE companies SET issue_counter = ${count} WHERE id = '${companyId}';`;
  const file = d1File(stateDir);
  execFileSync("sqlite3", [file], { input: sql });
  const seeded = Number(
    String(
      execFileSync("sqlite3", [file, `SELECT count(*) FROM issues WHERE company_id = '${companyId}'`]),
    ).trim(),
  );
  if (seeded !== count) throw new Error(`seeded ${seeded} issues, not ${count}`);
}

const ratio = (large, small) => Number((large.p50 / small.p50).toFixed(2));

/**
 * Seeds both companies; the bulk insert runs while no workerd has the database open (a stopped first
 * stack), since workerd's SQLite does not expect another process writing under it.
 */
async function seed() {
  const first = await bootStack({ BRIDGE: "0", RUNNER: "0" });
  try {
    const auth = await signInAdmin(first.baseUrl);
    console.error(`seeding companies of ${SMALL} and ${LARGE} issues`);
    const small = await apiCompany(first.baseUrl, auth, `Scale ${SMALL}`, SMALL);
    const large = await apiCompany(first.baseUrl, auth, `Scale ${LARGE}`, TEMPLATE);
    await first.stop({ keepState: true });
    bulkSeed(first.stateDir, large.id, LARGE);
    return { stateDir: first.stateDir, small, large };
  } catch (error) {
    await first.stop();
    throw error;
  }
}

export async function run() {
  const duration = benchDurationSeconds();
  const { stateDir, small, large } = await seed();
  const stack = await bootStack({ BRIDGE: "0", RUNNER: "0" }, { stateDir });
  try {
    const { baseUrl } = stack;
    const auth = await signInAdmin(baseUrl);
    const check = await fetch(`${baseUrl}/api/companies/${large.id}/issues?limit=1`, {
      headers: { cookie: auth.cookie },
    });
    // Totals are exact up to 10,000 (then X-Total-Capped); the seeding is checked in the database.
    const total = Number(check.headers.get("x-total-count"));
    const expected = Math.min(LARGE, 10_000);
    if (check.status !== 200 || total !== expected)
      throw new Error(
        `the large company's list answered ${check.status} with a total of ${total}, not ${expected}`,
      );

    const headers = { cookie: auth.cookie };
    const shapes = {
      "unfiltered list, first page": (id) => `${baseUrl}/api/companies/${id}/issues`,
      "filtered list (status=todo)": (id) => `${baseUrl}/api/companies/${id}/issues?status=todo`,
      [`text search (q=${NEEDLE})`]: (id) => `${baseUrl}/api/companies/${id}/issues?q=${NEEDLE}`,
      "board page": (id) => `${baseUrl}/companies/${id}/issues`,
    };
    console.error("warm-up (discarded)");
    for (const url of Object.values(shapes))
      for (const target of [small, large]) await measure({ url: url(target.id), headers, duration: 1 });
    console.error(`measuring (${duration} s each, ${DEFAULT_CONNECTIONS} connections)`);
    const rows = [];
    const results = {};
    let clean = true;
    for (const [label, url] of Object.entries(shapes)) {
      const smallRun = await measure({ url: url(small.id), headers, duration });
      const largeRun = await measure({ url: url(large.id), headers, duration });
      for (const [size, runResult] of [
        [SMALL, smallRun],
        [LARGE, largeRun],
      ]) {
        if (!isClean(runResult)) {
          clean = false;
          reportDirtyRun(`${label}, ${size} issues`, runResult);
        }
      }
      results[label] = { small: smallRun.p50, large: largeRun.p50, ratio: ratio(largeRun, smallRun) };
      rows.push({
        measurement: label,
        [`p50 ms, ${SMALL}`]: smallRun.p50,
        [`p50 ms, ${LARGE}`]: largeRun.p50,
        [`ratio ${LARGE}/${SMALL}`]: results[label].ratio,
      });
    }
    console.table(rows);
    const over = Object.entries(results).filter(([, r]) => r.ratio > 2);
    console.log(over.length === 0 ? "every shape within 2×" : `over 2×: ${over.map(([l]) => l).join(", ")}`);
    return { name, clean, results };
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
