// Media throughput: a 100 MB file from the bridge into R2, against a plain local copy of the same
// file in the same run. The bridge's own uploader (bridge/src/media/edge-upload.ts: 8 MiB parts,
// each a request, R2 multipart) pushes the file to `npm start`'s Worker and local R2 as the bridge
// holding a simulated session's lease; the baseline streams the file to another file on the same disk.
// Also reported: workerd's and the uploading process's peak memory growth (workerd's includes the local
// R2 simulator's).
//
//   node bench/media.mjs                (or `npm run bench`)
//   BENCH_MEDIA_MB=200 BENCH_MEDIA_ROUNDS=5 node bench/media.mjs
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bootStack, createAdminApiKey } from "./lib.mjs";
import { REPO_ROOT, sleep } from "./support/common.mjs";
import { Api } from "./support/session-api.mjs";
import { workerdRssKib } from "./support/workerd-usage.mjs";

export const name = "media";
const MIB = 2 ** 20;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The bootstrap bridge token `npm start` gives its bridge (.dev.vars). */
function localBridgeToken() {
  const vars = readFileSync(path.join(REPO_ROOT, ".dev.vars"), "utf8");
  const line = vars.split("\n").find((candidate) => candidate.startsWith("BRIDGE_TOKEN="));
  if (!line) throw new Error(".dev.vars has no BRIDGE_TOKEN");
  return line.slice("BRIDGE_TOKEN=".length).trim();
}

async function waitFor(probe, what) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A simulated session, connected, so that the stack's bridge (local-bridge) holds its lease. */
async function connectedSession(api) {
  const created = await api.expect("setup", "POST", "/api/sessions", {
    name: "media-bench",
    sessionId: "media-bench",
  });
  await api.expect("setup", "POST", "/api/sessions/media-bench/start");
  await waitFor(async () => (await api.call("GET", "/api/sessions/media-bench/qr")).status === 200, "QR");
  await api.expect("setup", "POST", "/api/sessions/media-bench/simulate/scan");
  await waitFor(
    async () => (await api.call("GET", "/api/sessions/media-bench")).body?.data?.state === "connected",
    "connected",
  );
  if (created.status !== 200) throw new Error(`session: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.data.id;
}

function runDriver(baseUrl, sessionId, token) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join("bench", "support", "media-upload.ts"), baseUrl, sessionId, token],
      { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk.toString("utf8");
    });
    child.once("close", (code) => {
      const line = out.split("\n").find((candidate) => candidate.startsWith("MEDIA_RESULT "));
      if (code === 0 && line) resolve(JSON.parse(line.slice("MEDIA_RESULT ".length)));
      else reject(new Error(`media-upload.ts exited ${code}${line ? "" : " without a result"}`));
    });
  });
}

export async function run() {
  // The simulated WhatsApp: this bench measures the bridge's way into R2, not WhatsApp's media host.
  const stack = await bootStack({ SIMULATOR: "1", RUNNER: "0" });
  try {
    const key = await createAdminApiKey(stack.baseUrl);
    const api = new Api(stack.baseUrl, key);
    const sessionId = await connectedSession(api);
    const workerdBefore = workerdRssKib(stack.pid);
    let workerdPeak = workerdBefore;
    const sampler = setInterval(() => {
      workerdPeak = Math.max(workerdPeak, workerdRssKib(stack.pid));
    }, 100);
    let result;
    try {
      result = await runDriver(stack.baseUrl, sessionId, localBridgeToken());
    } finally {
      clearInterval(sampler);
    }
    const mb = result.megabytes;
    const copyMBs = mb / median(result.copySeconds);
    const uploadMBs = mb / median(result.uploadSeconds);
    const workerdGrowthMiB = (workerdPeak - workerdBefore) / 1024;
    const uploaderGrowthMiB = (result.peakRss - result.baseRss) / MIB;
    // Memory is reported, not judged: both processes are fresh, and a first large transfer grows a heap
    // once (docs/messaging.md); the end-to-end suite asserts the bridge's bound after a warm-up.
    const clean = api.failures.length === 0;
    console.log(`${mb} MB file, median of ${result.uploadSeconds.length} rounds`);
    console.log(`  local file copy          ${copyMBs.toFixed(1)} MB/s`);
    console.log(
      `  bridge → edge → R2       ${uploadMBs.toFixed(1)} MB/s   (ratio to the copy ${(uploadMBs / copyMBs).toFixed(3)})`,
    );
    console.log(
      `  workerd peak RSS growth  ${workerdGrowthMiB.toFixed(1)} MiB; uploader ${uploaderGrowthMiB.toFixed(1)} MiB`,
    );
    return {
      clean,
      megabytes: mb,
      copyMBs,
      uploadMBs,
      ratio: uploadMBs / copyMBs,
      workerdGrowthMiB,
      uploaderGrowthMiB,
      rounds: result,
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
