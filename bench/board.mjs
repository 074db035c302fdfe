// The issue board at a company's size (issue 30): the board page for a company of 2,000 issues against
// one of 20, in the same run on one stack, and how long a change takes to reach an open board's live
// socket (PATCH answered → the feed's frame) in each. Reported as p50s and ratios (2,000 / 20); the
// board draws at most 50 cards per column, so the page should stay within the same bounds.
//
//   node bench/board.mjs          (or `npm run bench`)
//   BENCH_DURATION=5 BENCH_BOARD_ISSUES=2000 node bench/board.mjs
import path from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
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

export const name = "board";
const LARGE = Number(process.env.BENCH_BOARD_ISSUES ?? 2000);
const SMALL = 20;
const PUSHES = 30;
const STATUSES = ["backlog", "todo"];

/** A company of `count` issues, created through the API eight at a time, half in backlog, half todo. */
async function company(baseUrl, auth, count) {
  const created = await sendAsAdmin(baseUrl, auth, "POST", "/api/companies", { name: `Board ${count}` });
  const ids = [];
  for (let next = 0; next < count; ) {
    const batch = Array.from({ length: Math.min(8, count - next) }, (_, i) => next + i);
    next += batch.length;
    const issues = await Promise.all(
      batch.map((i) =>
        sendAsAdmin(baseUrl, auth, "POST", `/api/companies/${created.id}/issues`, {
          title: `Task ${i}`,
          status: STATUSES[i % 2],
          priority: ["critical", "high", "medium", "low"][i % 4],
        }),
      ),
    );
    ids.push(...issues.map((issue) => issue.id));
  }
  return { id: created.id, issueIds: ids };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

/** PATCH → the board socket's frame for that issue, PUSHES times, renaming one issue; the p50 in ms. */
async function pushLatency(baseUrl, auth, target) {
  const url = `${baseUrl.replace(/^http/, "ws")}/api/companies/${target.id}/events`;
  const socket = new WebSocket(url, { headers: { cookie: auth.cookie, origin: baseUrl } });
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  const issueId = target.issueIds[0];
  const timings = [];
  for (let round = 0; round < PUSHES; round++) {
    const title = `Renamed ${round}`;
    const arrived = new Promise((resolve) => {
      const onMessage = (data) => {
        const frame = JSON.parse(String(data));
        if (frame.type === "event" && frame.issueId === issueId && frame.title === title) {
          socket.off("message", onMessage);
          resolve(performance.now());
        }
      };
      socket.on("message", onMessage);
    });
    const started = performance.now();
    await sendAsAdmin(baseUrl, auth, "PATCH", `/api/issues/${issueId}`, { title });
    timings.push((await arrived) - started);
  }
  socket.close();
  return median(timings);
}

export async function run() {
  const duration = benchDurationSeconds();
  const stack = await bootStack({ BRIDGE: "0", RUNNER: "0" });
  try {
    const { baseUrl } = stack;
    const auth = await signInAdmin(baseUrl);
    console.error(`seeding companies of ${SMALL} and ${LARGE} issues`);
    const small = await company(baseUrl, auth, SMALL);
    const large = await company(baseUrl, auth, LARGE);
    const headers = { cookie: auth.cookie };
    const pageOf = (target) => `${baseUrl}/companies/${target.id}/issues`;

    console.error("warm-up (discarded)");
    for (const target of [small, large]) await measure({ url: pageOf(target), headers, duration: 1 });
    console.error(`measuring (${duration} s each, ${DEFAULT_CONNECTIONS} connections)`);
    const smallPage = await measure({ url: pageOf(small), headers, duration });
    const largePage = await measure({ url: pageOf(large), headers, duration });
    const smallPush = await pushLatency(baseUrl, auth, small);
    const largePush = await pushLatency(baseUrl, auth, large);

    const pageRatio = largePage.p50 / smallPage.p50;
    const pushRatio = largePush / smallPush;
    console.table([
      {
        measurement: `board page, ${SMALL} issues`,
        "p50 ms": smallPage.p50,
        "req/s": Math.round(smallPage.requestsPerSec),
      },
      {
        measurement: `board page, ${LARGE} issues`,
        "p50 ms": largePage.p50,
        "req/s": Math.round(largePage.requestsPerSec),
      },
      { measurement: `pushed change, ${SMALL} issues`, "p50 ms": Number(smallPush.toFixed(1)) },
      { measurement: `pushed change, ${LARGE} issues`, "p50 ms": Number(largePush.toFixed(1)) },
    ]);
    console.log(
      `board page p50 ${LARGE}/${SMALL}: ${pageRatio.toFixed(2)}; pushed change p50 ${LARGE}/${SMALL}: ${pushRatio.toFixed(2)}`,
    );
    const clean = isClean(smallPage) && isClean(largePage);
    if (!clean) reportDirtyRun("board bench", largePage);
    return { name, clean, smallPage, largePage, smallPush, largePush, pageRatio, pushRatio };
  } finally {
    await stack.stop();
  }
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const summary = await run();
  if (!summary.clean) process.exitCode = 1;
}
