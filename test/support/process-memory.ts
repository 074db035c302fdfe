// The resident memory of a stack's processes (workerd, the bridge), read from /proc as `ps` would, so a
// test can show that a transfer of a large file never held it whole in any of them.
import { readdirSync, readFileSync } from "node:fs";

function parentOf(pid: number): number | null {
  try {
    // Field 4 of /proc/<pid>/stat, after the command name in parentheses (which may hold spaces).
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/** Every live process under `root`, with its command line. */
export function descendants(root: number): Array<{ pid: number; command: string }> {
  const pids = readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
  const parents = new Map(pids.map((pid) => [pid, parentOf(pid)]));
  const under = (pid: number): boolean => {
    for (let at = parents.get(pid); at; at = parents.get(at) ?? null) if (at === root) return true;
    return false;
  };
  return pids.filter(under).map((pid) => ({ pid, command: commandOf(pid) }));
}

/**
 * The process under `root` whose command line matches `pattern`, the innermost one when a launcher
 * (tsx) and its child both match (throws when there is none).
 */
export function processUnder(root: number, pattern: RegExp): number {
  const matches = descendants(root).filter(({ command }) => pattern.test(command));
  const innermost = matches.find(({ pid }) => !matches.some((other) => parentOf(other.pid) === pid));
  if (!innermost) throw new Error(`no process matching ${pattern} under ${root}`);
  return innermost.pid;
}

export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return Number(kib ?? 0) * 1024;
}

/**
 * Samples the processes' resident memory every 50 ms until `stop()`, which answers each one's peak
 * growth over its memory when sampling began.
 */
export function watchMemory(pids: Record<string, number>): { stop(): Record<string, number> } {
  const base = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, rssBytes(pid)]));
  const peak = { ...base };
  const timer = setInterval(() => {
    for (const [name, pid] of Object.entries(pids)) {
      try {
        peak[name] = Math.max(peak[name] ?? 0, rssBytes(pid));
      } catch {
        // exited: its last sample stands
      }
    }
  }, 50);
  return {
    stop() {
      clearInterval(timer);
      return Object.fromEntries(
        Object.entries(peak).map(([name, bytes]) => [name, bytes - (base[name] ?? 0)]),
      );
    },
  };
}
