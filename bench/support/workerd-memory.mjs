// Resident memory of the workerd processes a stack started (`node scripts/start.mjs` → Miniflare →
// workerd), read from /proc: what holding MCP sessions costs the Worker and its Durable Objects.
import { readFileSync } from "node:fs";

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

const rssKib = (pid) => Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(read(`/proc/${pid}/status`))?.[1] ?? 0);

/** Sum of VmRSS (KiB) of the workerd processes under `stackPid`; null when none is found (not Linux). */
export function workerdRssKib(stackPid) {
  if (!stackPid) return null;
  const workerds = descendants(stackPid).filter((pid) => read(`/proc/${pid}/comm`).trim() === "workerd");
  return workerds.length ? workerds.reduce((sum, pid) => sum + rssKib(pid), 0) : null;
}
