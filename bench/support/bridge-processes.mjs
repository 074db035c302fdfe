// Real bridge processes for the benchmarks (`tsx bridge/src/main.ts`), each in its own process group,
// with its JSON log lines kept in memory, its RSS readable, and a stop that leaves nothing behind.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { groupIsAlive, signalGroup } from "../../scripts/process-group.mjs";
import { internalId, now, progress, REPO_ROOT, sleep } from "./common.mjs";

const TSX = path.join(REPO_ROOT, "node_modules", ".bin", "tsx");
const BRIDGE_CAPACITY = 5000;
const BRIDGE_JOIN_TIMEOUT_MS = 30_000;
const BRIDGE_STOP_TIMEOUT_MS = 8_000;
export const RELEASE_TIMEOUT_MS = 30_000;

/** Each bridge has its own credential, created by the SUPERADMIN (`api` is the admin's). */
export async function createBridgeToken(api, id) {
  const res = await api.call("POST", "/api/bridges", { id });
  if (res.status !== 201)
    throw new Error(`bridge credential for ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.token;
}

/** Live bridge process groups, SIGKILLed if this process exits without stopping them. */
export const liveBridgeGroups = new Set();
process.on("exit", () => {
  for (const pid of liveBridgeGroups) signalGroup(pid, "SIGKILL");
});

/** `tsx bridge/src/main.ts` in its own process group, its JSON log lines kept in memory. */
export function startBridge(baseUrl, id, token) {
  const child = spawn(TSX, ["bridge/src/main.ts"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      EDGE_URL: baseUrl,
      BRIDGE_TOKEN: token,
      BRIDGE_ID: id,
      SIMULATOR: "1",
      BRIDGE_CAPACITY: String(BRIDGE_CAPACITY),
      // The bench reads its info lines ("fleet link open", "bridge stopped").
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  liveBridgeGroups.add(child.pid);
  const bridge = { id, child, lines: [], exit: null };
  const collector = () => {
    let partial = "";
    return (chunk) => {
      const parts = (partial + chunk.toString("utf8")).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) if (line) bridge.lines.push(parsedLine(line));
    };
  };
  child.stdout.on("data", collector());
  child.stderr.on("data", collector());
  // "close": the process exited and its output was read to the end.
  child.once("exit", (code, signal) => {
    bridge.exit = { code, signal };
  });
  bridge.exited = new Promise((resolve) => child.once("close", () => resolve()));
  return bridge;
}

export function parsedLine(line) {
  try {
    const value = JSON.parse(line);
    return typeof value === "object" && value !== null ? value : { msg: line };
  } catch {
    return { msg: line };
  }
}

export const isUp = (bridge) => bridge.exit === null;

/** How a stopped bridge went: tsx's CLI exits with its child's code (143 if it had to kill it). */
export const bridgeExit = (bridge) => ({
  bridge: bridge.id,
  stopMs: bridge.stopMs ?? null,
  exit: bridge.exit,
  loggedStopped: bridge.lines.some((line) => line.msg === "bridge stopped"),
});

/**
 * SIGTERM to the bridge's own node process (not to tsx's CLI: on SIGTERM it re-sends the signal and
 * SIGKILLs a child that does not acknowledge it within a few tens of ms, which a busy bridge cannot),
 * then SIGKILL to the whole group if anything is left after BRIDGE_STOP_TIMEOUT_MS.
 */
export async function stopBridge(bridge) {
  const pid = bridge.child.pid;
  const started = now();
  if (groupIsAlive(pid)) {
    try {
      process.kill(bridge.nodePid ?? pid, "SIGTERM");
    } catch {
      signalGroup(pid, "SIGTERM");
    }
    const deadline = Date.now() + BRIDGE_STOP_TIMEOUT_MS;
    while (groupIsAlive(pid) && Date.now() < deadline) await sleep(50);
    if (groupIsAlive(pid)) {
      progress(`bridge ${bridge.id} did not stop within ${BRIDGE_STOP_TIMEOUT_MS} ms; sending SIGKILL`);
      signalGroup(pid, "SIGKILL");
      while (groupIsAlive(pid)) await sleep(50);
    }
    bridge.stopMs ??= now() - started;
  }
  liveBridgeGroups.delete(pid);
  await Promise.race([bridge.exited, sleep(1_000)]);
}

export async function waitForFleetLink(bridge) {
  const deadline = Date.now() + BRIDGE_JOIN_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!isUp(bridge)) throw new Error(`bridge ${bridge.id} exited: ${JSON.stringify(bridge.exit)}`);
    if (bridge.lines.some((line) => line.msg === "fleet link open")) {
      bridge.nodePid = bridgeNodePid(bridge);
      return;
    }
    await sleep(50);
  }
  throw new Error(`bridge ${bridge.id}: no "fleet link open" within ${BRIDGE_JOIN_TIMEOUT_MS} ms`);
}

/** The node process that runs the bridge: tsx's CLI runs it as its only child process. */
export function bridgeNodePid(bridge) {
  let pid = bridge.child.pid;
  for (let depth = 0; depth < 3; depth++) {
    let children;
    try {
      children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
        .trim()
        .split(/\s+/)
        .filter(Boolean);
    } catch {
      return pid;
    }
    if (children.length !== 1) return pid;
    pid = Number(children[0]);
  }
  return pid;
}

/** VmRSS of the bridge's node process, in KiB. */
export function bridgeRssKib(bridge) {
  const pid = bridge.nodePid ?? bridgeNodePid(bridge);
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return { pid, kib: Number(match[1]) };
}

/** Distinct sessions each bridge logged "whatsapp connected" for, among `ids`, since `marks`. */
export function connectedSplit(bridges, marks, ids) {
  const wanted = new Set(ids.map(internalId));
  return Object.fromEntries(
    bridges.map((bridge) => {
      const seen = new Set();
      for (const line of bridge.lines.slice(marks.get(bridge) ?? 0)) {
        if (line.msg === "whatsapp connected" && wanted.has(line.session)) seen.add(line.session);
      }
      return [bridge.id, seen.size];
    }),
  );
}

export const markLines = (bridges) => new Map(bridges.map((bridge) => [bridge, bridge.lines.length]));

/** Log lines at warn or error since the marks, for the report. */
export function bridgeProblems(bridges, marks) {
  const problems = [];
  for (const bridge of bridges) {
    for (const line of bridge.lines.slice(marks.get(bridge) ?? 0)) {
      if (line.level === "warn" || line.level === "error" || line.level === undefined) {
        problems.push({ bridge: bridge.id, ...line });
      }
    }
  }
  return problems;
}

/** Waits until a bridge logged letting go of each of `ids` (unassigned, or dropped on release). */
export async function waitForRelease(bridges, marks, ids) {
  const pending = new Set(ids.map(internalId));
  const deadline = Date.now() + RELEASE_TIMEOUT_MS;
  const cursors = new Map(marks);
  while (pending.size > 0 && Date.now() < deadline) {
    for (const bridge of bridges) {
      const lines = bridge.lines;
      for (let i = cursors.get(bridge) ?? 0; i < lines.length; i++) {
        const { msg, session } = lines[i];
        if (msg === "session unassigned" || (typeof msg === "string" && msg.startsWith("dropping session"))) {
          pending.delete(session);
        }
      }
      cursors.set(bridge, lines.length);
    }
    if (pending.size > 0) await sleep(50);
  }
  return pending.size;
}

/** Writes every bridge's log lines (JSONL) to a new directory under the OS temp dir; returns it. */
export function dumpBridgeLogs(bridges) {
  const dir = mkdtempSync(path.join(tmpdir(), "switchboard-bench-sessions-"));
  for (const bridge of bridges) {
    writeFileSync(
      path.join(dir, `${bridge.id}.jsonl`),
      bridge.lines.map((l) => JSON.stringify(l)).join("\n"),
    );
  }
  return dir;
}
