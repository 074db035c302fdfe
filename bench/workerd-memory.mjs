// Where workerd's memory goes when a large body streams through a Worker under Miniflare (issue 33): a
// minimal Worker, not Switchboard's, with one R2 bucket, takes a generated file of BENCH_MEMORY_MB
// through each of: read to nowhere (`sink`), one R2 put of known length (`put`), a put in parts read
// into two reused buffers (`multipart`, as workers/media/objects.ts does for a body of unknown length),
// parts sent as requests of their own (`parts`, as the bridge sends a received file), and the stored
// objects read back (`get`, `get-parts`). Each runs twice. Reported per run: workerd's resident memory
// (peak growth, and what it kept after), and through the inspector the peak growth of the Worker's
// isolate and of Miniflare's R2 simulator's (JavaScript heap + ArrayBuffer backing stores), the first
// after a full garbage collection. What grows workerd without growing either isolate is native buffers
// and the allocator's retained pages: a second identical run that does not grow it again is retention.
//
//   node bench/workerd-memory.mjs                (a diagnostic, not part of `npm run bench`)
//   BENCH_MEMORY_MB=600 node bench/workerd-memory.mjs
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Miniflare } from "miniflare";
import { findFreePort } from "./lib.mjs";
import { inspector } from "./support/inspector.mjs";

const MIB = 2 ** 20;
const SIZE = Number(process.env.BENCH_MEMORY_MB ?? 200) * 1e6;
const PART = 8 * MIB;
const RUNS = ["sink", "put", "multipart", "parts", "get", "get-parts"].flatMap((mode) => [mode, mode]);

const WORKER = `
const PART = ${PART};
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const mode = url.pathname.slice(1);
    const id = url.searchParams.get("id");
    if (mode === "sink") {
      let size = 0;
      for await (const chunk of request.body) size += chunk.byteLength;
      return new Response(String(size));
    }
    if (mode === "put") return new Response(String((await env.B.put("put", request.body)).size));
    if (mode === "get") {
      const object = await env.B.get(url.searchParams.get("key"));
      return new Response(object.body, { headers: { "content-length": String(object.size) } });
    }
    if (mode === "create") return new Response((await env.B.createMultipartUpload("parts")).uploadId);
    if (mode === "part") {
      const upload = env.B.resumeMultipartUpload("parts", id);
      return new Response((await upload.uploadPart(Number(url.searchParams.get("n")), request.body)).etag);
    }
    if (mode === "complete") {
      const upload = env.B.resumeMultipartUpload("parts", id);
      return new Response(String((await upload.complete(await request.json())).size));
    }
    if (mode === "multipart") {
      const upload = await env.B.createMultipartUpload("multipart");
      const buffers = [new Uint8Array(PART), new Uint8Array(PART)];
      const parts = [];
      let turn = 0, filled = 0;
      for await (const chunk of request.body) {
        for (let at = 0; at < chunk.byteLength; ) {
          const take = Math.min(chunk.byteLength - at, PART - filled);
          buffers[turn].set(chunk.subarray(at, at + take), filled);
          filled += take;
          at += take;
          if (filled < PART) continue;
          parts.push(await upload.uploadPart(parts.length + 1, buffers[turn]));
          turn = 1 - turn;
          filled = 0;
        }
      }
      if (filled) parts.push(await upload.uploadPart(parts.length + 1, buffers[turn].subarray(0, filled)));
      return new Response(String((await upload.complete(parts)).size));
    }
    return new Response("ok");
  },
};`;

function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

function workerdPid() {
  for (const name of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    let at = parentOf(Number(name));
    while (at && at !== process.pid) at = parentOf(at);
    if (at && readFileSync(`/proc/${name}/cmdline`, "utf8").includes("workerd")) return Number(name);
  }
  throw new Error("no workerd under this process");
}

const rss = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) * 1024;

const held = (usage) => usage.usedSize + (usage.backingStorageSize ?? 0);

function* chunks(size) {
  for (let at = 0, index = 0; at < size; at += 256 * 1024, index++)
    yield Buffer.alloc(Math.min(256 * 1024, size - at), index & 0xff);
}

/** A streamed request body of `size` bytes with its Content-Length; answers the response's text. */
function send(url, size, method = "POST") {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { "content-length": String(size) } });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve(body));
    });
    req.on("error", reject);
    pipeline(Readable.from(chunks(size)), req).catch(reject);
  });
}

async function sendInParts(base) {
  const id = encodeURIComponent(await (await fetch(new URL("/create", base), { method: "POST" })).text());
  const parts = [];
  for (let at = 0; at < SIZE; at += PART) {
    const partNumber = parts.length + 1;
    const etag = await send(
      new URL(`/part?id=${id}&n=${partNumber}`, base),
      Math.min(PART, SIZE - at),
      "PUT",
    );
    parts.push({ partNumber, etag });
  }
  const body = JSON.stringify(parts);
  return (await fetch(new URL(`/complete?id=${id}`, base), { method: "POST", body })).text();
}

async function download(url) {
  let size = 0;
  for await (const chunk of (await fetch(url)).body) size += chunk.byteLength;
  return String(size);
}

function transfer(mode, base) {
  if (mode === "parts") return sendInParts(base);
  if (mode === "get") return download(new URL("/get?key=put", base));
  if (mode === "get-parts") return download(new URL("/get?key=parts", base));
  return send(new URL(`/${mode}`, base), SIZE);
}

async function main() {
  const inspectorPort = await findFreePort();
  const r2Persist = mkdtempSync(path.join(tmpdir(), "workerd-memory-"));
  const miniflare = new Miniflare({
    name: "probe",
    modules: true,
    script: WORKER,
    r2Buckets: ["B"],
    r2Persist,
    inspectorPort,
  });
  try {
    const base = await miniflare.ready;
    const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
    const urlOf = (title) => targets.find((target) => target.title?.endsWith(title))?.webSocketDebuggerUrl;
    const worker = await inspector(urlOf("core:user:probe"));
    const r2 = await inspector(urlOf("r2:bucket"));
    const pid = workerdPid();
    const mib = (bytes) => (bytes / MIB).toFixed(1);
    console.log(`${SIZE / 1e6} MB per run; MiB growth (peak, sampled every 100 ms)\n`);
    console.log("| run | workerd RSS peak | RSS kept after | Worker isolate | R2 simulator isolate |");
    console.log("|---|---:|---:|---:|---:|");
    for (const mode of RUNS) {
      await worker.send("HeapProfiler.enable");
      // workerd collects when the isolate is next entered: a request wakes it.
      // (one request may be served before the command arrives: wake it until it has collected).
      let collected = false;
      const collecting = worker.send("HeapProfiler.collectGarbage").then(() => {
        collected = true;
      });
      while (!collected) await Promise.race([collecting, fetch(new URL("/", base)).then((r) => r.text())]);
      const start = { rss: rss(pid), worker: held(await worker.send("Runtime.getHeapUsage")) };
      start.r2 = held(await r2.send("Runtime.getHeapUsage"));
      const peak = { ...start };
      let running = true;
      const sampler = (async () => {
        while (running) {
          peak.rss = Math.max(peak.rss, rss(pid));
          peak.worker = Math.max(peak.worker, held(await worker.send("Runtime.getHeapUsage")));
          peak.r2 = Math.max(peak.r2, held(await r2.send("Runtime.getHeapUsage")));
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      const answer = await transfer(mode, base);
      running = false;
      await sampler;
      if (answer !== String(SIZE)) throw new Error(`${mode}: answered ${answer}`);
      const after = rss(pid) - start.rss;
      peak.rss = Math.max(peak.rss, start.rss + after);
      console.log(
        `| ${mode} | ${mib(peak.rss - start.rss)} | ${mib(after)} | ${mib(peak.worker - start.worker)} | ${mib(peak.r2 - start.r2)} |`,
      );
    }
    worker.close();
    r2.close();
  } finally {
    await miniflare.dispose();
    rmSync(r2Persist, { recursive: true, force: true });
  }
}

await main();
