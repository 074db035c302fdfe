/**
 * The real bridge (bridge/src/main.ts, configured by its environment) in a process that also answers
 * the bench's `memory` request over IPC: a full collection first (`--expose-gc`), so the figure is
 * settled memory rather than garbage not yet collected, then this process's own memory.
 */
process.on("message", (message: unknown) => {
  if (message !== "memory") return;
  globalThis.gc?.();
  const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
  process.send?.({ rss, heapUsed, external, arrayBuffers });
});

await import("../../bridge/src/main.ts");
