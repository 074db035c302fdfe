// Whether the Worker keeps answering while something expensive runs. workerd runs one JS thread per
// isolate, and these tests share it with the Worker and its Durable Objects: work that never yields
// delays every other request. A probe is due every PROBE_EVERY_MS; its delay is how late its
// `/api/health` answer came after it was due, so a blocked event loop shows however it began.
import { expect } from "vitest";
import { call } from "./helpers";

const PROBE_EVERY_MS = 20;

/**
 * Polls `/api/health` until `work` settles (and at least `atLeastMs`), answering the slowest delay
 * in ms. The answer is `work`'s own outcome too, so a caller can assert on both.
 */
export async function slowestHealthWhile<T>(
  work: Promise<T>,
  atLeastMs = 0,
): Promise<{ slowestMs: number; result: T }> {
  let settled = false;
  const watched = work.finally(() => {
    settled = true;
  });
  const started = Date.now();
  let slowestMs = 0;
  while (!settled || Date.now() - started < atLeastMs) {
    const due = Date.now() + PROBE_EVERY_MS;
    await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
    const health = await call("GET", "/api/health");
    expect(health.status).toBe(200);
    slowestMs = Math.max(slowestMs, Date.now() - due);
  }
  return { slowestMs, result: await watched };
}
