/** One bridge process holds 1,000 simulated sessions, each on its own session link, without strain. */
import { afterEach, describe, expect, it } from "vitest";
import { startSimulatedBridge } from "../support/bridge.ts";
import { type FakeEdge, startFakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";

const SESSIONS = 1_000;
let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe("scale", () => {
  it(`holds ${SESSIONS} linked sessions and lets them all go on shutdown`, async () => {
    const edge: FakeEdge = await startFakeEdge();
    cleanup.push(() => edge.close());
    const bridge = await startSimulatedBridge(edge);
    cleanup.push(() => bridge.fleet.shutdown());
    const ids = Array.from({ length: SESSIONS }, (_, i) => `scale-${i}`);
    for (const id of ids) {
      edge.session(id).auth = { creds: { registered: true, me: { id: `${id}@s.whatsapp.net` } }, keys: {} };
    }
    await bridge.assign(ids[0] ?? "");
    const heapBefore = process.memoryUsage().heapUsed;
    for (const id of ids.slice(1)) edge.sendFleet({ type: "assign", session: id });

    const connected = () =>
      ids.filter((id) => edge.session(id).stored.some((e) => e.kind === "connected")).length;
    await waitFor(() => connected() === SESSIONS, "every session connected", 30_000);
    expect(bridge.network.openSockets).toBe(SESSIONS);
    expect(bridge.fleet.sessions).toHaveLength(SESSIONS);
    // Generous bound: the point is "kilobytes per session", not a precise number.
    const perSessionKb = (process.memoryUsage().heapUsed - heapBefore) / SESSIONS / 1024;
    expect(perSessionKb).toBeLessThan(200);

    await bridge.fleet.shutdown();
    expect(bridge.network.openSockets).toBe(0);
    await waitFor(() => ids.every((id) => edge.session(id).closes.length === 1), "every link closed", 10_000);
    expect(new Set(ids.flatMap((id) => edge.session(id).closes))).toEqual(new Set([1001]));
  }, 60_000);
});
