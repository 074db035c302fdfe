/**
 * One run of bench/wa-sessions.mjs for one N: the fake WhatsApp (test/fake-whatsapp) and a fake edge
 * (test/bridge/support/fake-edge.ts) live in this process; the real bridge runs as a child process
 * (wa-bridge.ts around bridge/src/main.ts, real Baileys), so its resident memory holds the bridge's
 * sessions and nothing of the fakes. Phases: N sessions assigned and linked by QR (a fake phone scans
 * each), a 1,000-message inbound burst spread evenly over the sessions (one fake contact per session),
 * then the fake WhatsApp restarts (every connection dropped, the port refusing for a moment, accounts
 * and devices kept) and every session must connect again without a QR.
 *
 *   node --import tsx bench/support/wa-scale.ts <sessions>
 *
 * Progress goes to stderr; the last stdout line is `WA_SCALE_RESULT <json>`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type FakeEdge, startFakeEdge } from "../../test/bridge/support/fake-edge.ts";
import { FakeContact } from "../../test/fake-whatsapp/contact.ts";
import { FakePhone } from "../../test/fake-whatsapp/phone.ts";
import type { LinkedDevice } from "../../test/fake-whatsapp/server.ts";
import { FakeWhatsApp } from "../../test/fake-whatsapp/server.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const BURST_MESSAGES = Number(process.env.BENCH_WA_BURST ?? 1000);
/** Sessions being linked at once: each waits mostly on its QR, the scan and the 515 restart. */
const PAIR_CONCURRENCY = Number(process.env.BENCH_WA_PAIR_CONCURRENCY ?? 8);
/** How long the restarted fake refuses connections (a server restart as clients see it). */
const DOWN_MS = Number(process.env.BENCH_WA_DOWN_MS ?? 1000);
/** After pairing and after the burst, Baileys' background work (pre-key uploads, acks) settles first. */
const SETTLE_MS = Number(process.env.BENCH_WA_SETTLE_MS ?? 3000);
const POLL_MS = 50;
const BURST_TIMEOUT_MS = Number(process.env.BENCH_WA_BURST_TIMEOUT_MS ?? 120_000 + 200 * BURST_MESSAGES);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`[wa-scale] ${line}\n`);

async function until<T>(probe: () => T | false | undefined, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== false && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

const countOf = (edge: FakeEdge, session: string, kind: string) =>
  edge.session(session).stored.filter((event) => event.kind === kind).length;

interface Memory {
  /** VmRSS of the bridge process, from /proc, after a full collection. */
  rssBytes: number;
  heapUsedBytes: number;
  externalBytes: number;
  /** The bridge process's CPU time so far (user + system, /proc/<pid>/stat), in seconds. */
  cpuSeconds: number;
}

/** utime + stime of a process, in seconds (clock ticks are 100 a second on Linux). */
function cpuSeconds(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The real bridge process, its log lines kept (warnings and errors), its memory readable. */
function startBridgeProcess(edge: FakeEdge, whatsapp: FakeWhatsApp, capacity: number) {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--expose-gc", "--import", "tsx", path.join(REPO_ROOT, "bench/support/wa-bridge.ts")],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        EDGE_URL: edge.url,
        BRIDGE_TOKEN: edge.token,
        BRIDGE_ID: "bench-wa",
        BRIDGE_CAPACITY: String(capacity),
        WA_WEBSOCKET_URL: whatsapp.url,
        WA_CERT_ROOT_KEY: whatsapp.rootKey.toString("hex"),
        // No internet: the bundled WhatsApp Web version, which the fake accepts.
        WA_VERSION_URL: "off",
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    },
  );
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) if (line) lines.push(line);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const memory = async (): Promise<Memory> => {
    const answer = new Promise<{ heapUsed: number; external: number }>((resolve) => {
      child.once("message", (message) => resolve(message as { heapUsed: number; external: number }));
    });
    child.send("memory");
    const { heapUsed, external } = await answer;
    const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
    const kib = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? Number.NaN);
    return {
      rssBytes: kib * 1024,
      heapUsedBytes: heapUsed,
      externalBytes: external,
      cpuSeconds: cpuSeconds(child.pid),
    };
  };
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await Promise.race([exited, sleep(8_000)]);
    if (child.exitCode === null) child.kill("SIGKILL");
  };
  return { child, lines, memory, stop };
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

async function main(): Promise<void> {
  const sessions = Number(process.argv[2]);
  if (!Number.isInteger(sessions) || sessions < 1) throw new Error("usage: wa-scale.ts <sessions>");
  const whatsapp = await FakeWhatsApp.start();
  const edge = await startFakeEdge("bench-wa-token");
  const bridge = startBridgeProcess(edge, whatsapp, sessions + 10);
  try {
    const ids = Array.from({ length: sessions }, (_, i) => `wa-${String(i).padStart(4, "0")}`);
    await until(
      () => edge.fleet.frames.some((frame) => frame.type === "hello"),
      "the bridge's hello",
      60_000,
    );
    await sleep(1_000);
    const idle = await bridge.memory();
    log(`bridge up, ${(idle.rssBytes / 2 ** 20).toFixed(1)} MiB RSS with 0 sessions; pairing ${sessions}`);

    // ── Pairing: assign, wait for the QR, the phone scans, wait for `connected`. ──
    const devices = new Map<string, LinkedDevice>();
    let connected = 0;
    const pairStart = performance.now();
    await pool(ids, PAIR_CONCURRENCY, async (id) => {
      const index = ids.indexOf(id);
      edge.sendFleet({ type: "assign", session: id });
      const qr = await until(
        () => edge.session(id).stored.find((event) => event.kind === "qr"),
        `${id}'s QR`,
        60_000,
      );
      const phone = new FakePhone(whatsapp, `4915${String(index).padStart(7, "0")}`);
      devices.set(id, await phone.scan(qr.kind === "qr" ? qr.qr : ""));
      await until(() => countOf(edge, id, "connected") > 0, `${id} connected`, 60_000);
      if (++connected % 25 === 0) log(`${connected}/${sessions} paired`);
    });
    const pairMs = performance.now() - pairStart;
    await sleep(SETTLE_MS);
    const paired = await bridge.memory();
    log(
      `paired in ${(pairMs / 1000).toFixed(1)} s; ${(paired.rssBytes / 2 ** 20).toFixed(1)} MiB RSS, ` +
        `${(paired.heapUsedBytes / 2 ** 20).toFixed(1)} MiB live heap`,
    );

    // ── Inbound burst: message k from session k mod N's contact; each contact sends in order. ──
    const contacts = ids.map(
      (_, i) => new FakeContact(whatsapp, `4916${String(i).padStart(7, "0")}`, `C${i}`),
    );
    const perSession = ids.map(
      (_, i) => Math.floor(BURST_MESSAGES / sessions) + (i < BURST_MESSAGES % sessions ? 1 : 0),
    );
    const messageCount = () => ids.reduce((sum, id) => sum + countOf(edge, id, "message"), 0);
    const messagesBefore = messageCount();
    const burstStart = performance.now();
    let sentAt = 0;
    const sending = Promise.all(
      ids.map(async (id, i) => {
        const device = devices.get(id);
        const contact = contacts[i];
        if (!device || !contact) throw new Error(`${id} was not paired`);
        for (let k = 0; k < (perSession[i] ?? 0); k++) await contact.sendText(device, `burst ${i}.${k}`);
      }),
    ).then(() => {
      sentAt = performance.now() - burstStart;
    });
    // A bridge that cannot keep up is a result, not a crash: what arrived by the deadline is reported
    // (`delivered`, and `deliveredMs` null) and the restart is still measured.
    const burstDone = await until(
      () => messageCount() - messagesBefore >= BURST_MESSAGES,
      `${BURST_MESSAGES} message events at the edge`,
      BURST_TIMEOUT_MS,
    ).then(
      () => true,
      () => false,
    );
    const burstMs = performance.now() - burstStart;
    const delivered = messageCount() - messagesBefore;
    if (burstDone) await sending;
    else {
      // Still going: its sends may fail once the sockets close at the end.
      sending.catch(() => {});
      log(`burst: only ${delivered}/${BURST_MESSAGES} delivered after ${BURST_TIMEOUT_MS} ms`);
    }
    await sleep(SETTLE_MS);
    const afterBurst = await bridge.memory();
    log(
      `burst: ${delivered} delivered in ${(burstMs / 1000).toFixed(1)} s (sent by the fakes in ${(sentAt / 1000).toFixed(1)} s)`,
    );

    // Baileys' keep-alive gave up (408) before the restart: the bridge's event loop too busy to answer
    // in time (the restart's own drops are reported the same way, so they are counted before it).
    const connectionLost = bridge.lines.filter((line) => line.includes('"code":408')).length;

    // ── The fake WhatsApp restarts; every session must log in again (no QR). ──
    const connectedBefore = new Map(ids.map((id) => [id, countOf(edge, id, "connected")]));
    const reconnectedAt = new Map<string, number>();
    // Stanzas the fake still holds unacknowledged: each is delivered again at the device's next login.
    const offlineWaiting = [...devices.values()].reduce(
      (sum, device) => sum + whatsapp.offline.waitingFor(device.jid).length,
      0,
    );
    const restartStart = performance.now();
    await whatsapp.restart(DOWN_MS);
    const listeningMs = performance.now() - restartStart;
    // As with the burst, a bridge that cannot reconnect everyone in time is reported (`allMs` null).
    const reconnectDone = await until(
      () => {
        for (const id of ids) {
          if (!reconnectedAt.has(id) && countOf(edge, id, "connected") > (connectedBefore.get(id) ?? 0)) {
            reconnectedAt.set(id, performance.now() - restartStart);
          }
        }
        return reconnectedAt.size === sessions;
      },
      "every session connected again",
      120_000 + 200 * sessions,
    ).then(
      () => true,
      () => false,
    );
    const reconnectMs = reconnectDone ? Math.max(...reconnectedAt.values()) : null;
    const reconnected = await bridge.memory();
    const sorted = [...reconnectedAt.values()].sort((a, b) => a - b);
    const qrsAfter = ids.reduce((sum, id) => sum + countOf(edge, id, "qr"), 0) - sessions;
    log(
      `${reconnectedAt.size}/${sessions} reconnected; all after ${reconnectMs === null ? "(not all)" : Math.round(reconnectMs)} ms`,
    );

    const problems = bridge.lines.filter((line) => /"level":"error"/.test(line));
    const result = {
      sessions,
      burstMessages: BURST_MESSAGES,
      burstPerSession: perSession[0],
      downMs: DOWN_MS,
      pairConcurrency: PAIR_CONCURRENCY,
      memory: { idle, paired, afterBurst, reconnected },
      pairMs: Math.round(pairMs),
      burst: {
        deliveredMs: burstDone ? Math.round(burstMs) : null,
        delivered,
        waitedMs: Math.round(burstMs),
        sentMs: Math.round(sentAt),
      },
      connectionLost,
      reconnect: {
        allMs: reconnectMs === null ? null : Math.round(reconnectMs),
        reconnected: reconnectedAt.size,
        listeningAgainMs: Math.round(listeningMs),
        p50Ms: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0),
        firstMs: Math.round(sorted[0] ?? 0),
        extraQrs: qrsAfter,
        offlineWaiting,
      },
      bridgeErrors: problems.length,
      bridgeErrorSample: problems.slice(0, 3),
      protocolErrors: edge.protocolErrors.length,
    };
    process.stdout.write(`WA_SCALE_RESULT ${JSON.stringify(result)}\n`);
  } catch (error) {
    log(`bridge log tail:\n${bridge.lines.slice(-20).join("\n")}`);
    throw error;
  } finally {
    await bridge.stop();
    await whatsapp.close();
    await edge.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
