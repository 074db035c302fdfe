// Shared by the benchmark scripts: progress output, timing, statistics and a bounded worker pool.
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * Public sessionId -> internal id. The fleet and the bridges know a session by its internal id (the
 * name of its Durable Object), so bridge log lines carry that one.
 */
export const internalIds = new Map();
export const internalId = (sessionId) => internalIds.get(sessionId) ?? sessionId;

const loadedAt = performance.now();
/** Progress on stderr, with the seconds since this module loaded. */
export const progress = (...args) =>
  console.error(`[sessions +${((performance.now() - loadedAt) / 1000).toFixed(1)} s]`, ...args);

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const now = () => performance.now();

export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function stats(values) {
  return {
    count: values.length,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    max: values.length ? Math.max(...values) : Number.NaN,
  };
}

export const ms = (value) => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : "n/a");
export const times = (value, baseline) => (Number.isFinite(value) ? (value / baseline).toFixed(1) : "n/a");

/** Runs `task` over `items` with at most `limit` in flight. */
export async function pool(items, limit, task) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await task(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
