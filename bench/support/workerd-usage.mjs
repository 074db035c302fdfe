// Resident memory of the workerd processes a stack started (`node scripts/start.mjs` → Miniflare →
// workerd), read from /proc: what holding MCP sessions costs the Worker and its Durable Objects, and
// the CPU a run of calls cost it (less sensitive than latency to other load on the machine).
import { readFileSync } from "node:fs";
import { now } from "./common.mjs";

const read = (file) => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
};

/** Every process below `pid` (children of each of its threads), depth first. */
function descendants(pid) {
  const found = [];
  const tasks = read(`/proc/${pid}/task/${pid}/children`).split(/\s+/).filter(Boolean).map(Number);
  for (const child of tasks) found.push(child, ...descendants(child));
  return found;
}

/** Every workerd process under `stackPid`. */
const workerdsOf = (stackPid) =>
  stackPid ? descendants(stackPid).filter((pid) => read(`/proc/${pid}/comm`).trim() === "workerd") : [];

/** USER_HZ: 100 on every Linux the stack runs on (getconf CLK_TCK). */
const CLOCK_TICKS_PER_SECOND = 100;

const rssKib = (pid) => Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(read(`/proc/${pid}/status`))?.[1] ?? 0);

/** Sum of VmRSS (KiB) of the workerd processes under `stackPid`; null when none is found (not Linux). */
export function workerdRssKib(stackPid) {
  const workerds = workerdsOf(stackPid);
  return workerds.length ? workerds.reduce((sum, pid) => sum + rssKib(pid), 0) : null;
}

/** CPU time (user + system, ms) the workerd processes under `stackPid` have used; null when none is found. */
export function workerdCpuMs(stackPid) {
  const workerds = workerdsOf(stackPid);
  if (workerds.length === 0) return null;
  const ticks = workerds.reduce((sum, pid) => {
    // Fields after the command name: state is 3rd overall, utime the 14th, stime the 15th.
    const fields = read(`/proc/${pid}/stat`).split(") ")[1]?.split(" ") ?? [];
    return sum + Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
  }, 0);
  return ticks * (1000 / CLOCK_TICKS_PER_SECOND);
}

const IDLE_SAMPLE_MS = 2_000;

/** CPU ms per ms workerd spends with nothing asked of it (the runner's and the bridge's polls). */
export async function idleCpuRate(stackPid) {
  const start = workerdCpuMs(stackPid);
  if (start === null) return 0;
  await new Promise((resolve) => setTimeout(resolve, IDLE_SAMPLE_MS));
  return (workerdCpuMs(stackPid) - start) / IDLE_SAMPLE_MS;
}

/**
 * Runs `block` (which answers a run with its `total` requests) and measures workerd's CPU per request
 * meanwhile, less its idle rate; `cpuMs` is null where /proc has no workerd (not Linux).
 */
export async function withCpu(stackPid, idleMsPerMs, block) {
  const before = workerdCpuMs(stackPid);
  const startedAt = now();
  const result = await block();
  const run = result.run ?? result;
  if (before === null || run.total === 0) return { ...result, cpuMs: null };
  const background = idleMsPerMs * (now() - startedAt);
  return { ...result, cpuMs: Math.max(0, workerdCpuMs(stackPid) - before - background) / run.total };
}
