// Kill -9 the bridge that holds 20 connected sessions while a second bridge runs: every session
// comes back Connected on the second bridge, with its stored credentials (no new QR).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { type BridgeProcess, createBridgeCredential, startBridgeProcess } from "../support/bridge-process.ts";
import { connectedSession } from "../support/messaging.ts";
import { type Stack, startStack } from "../support/stack.ts";

type Detail = { state: string; me: { id: string } | null; hasInstance: boolean };
type Envelope<T> = { data: T };
const SESSIONS = 20;

let stack: Stack;
let api: ApiClient;
const bridges: BridgeProcess[] = [];

beforeAll(async () => {
  stack = await startStack({ env: { SIMULATOR: "1", BRIDGE: "0", FLEET_GRACE_MS: "1500" } });
  api = await adminClient(stack.baseUrl);
});

afterAll(async () => {
  for (const bridge of bridges) await bridge.kill("SIGTERM");
  await stack?.stop();
});

const detail = async (id: string) =>
  (await api.call<Envelope<Detail>>("GET", `/api/sessions/${id}`)).body.data;

describe("one socket per session", () => {
  it("50 concurrent starts open exactly one WhatsApp socket on a real bridge", async () => {
    const bridge = startBridgeProcess(
      stack.baseUrl,
      "bridge-solo",
      await createBridgeCredential(api, "bridge-solo"),
    );
    bridges.push(bridge);
    await eventually(async () =>
      bridge.lines.some((l) => l.includes("fleet link open")) ? true : undefined,
    );
    const created = await api.call<Envelope<{ id: string }>>("POST", "/api/sessions", {
      name: "race",
      sessionId: "race",
    });
    const starts = await Promise.all(
      Array.from({ length: 50 }, () => api.call("POST", "/api/sessions/race/start")),
    );
    expect(starts.every((r) => r.status === 200)).toBe(true);
    await eventually(async () => ((await detail("race")).state === "scan_qr" ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const opens = bridge.lines.filter(
      (l) => l.includes('"whatsapp opening"') && l.includes(created.body.data.id),
    );
    expect(opens).toHaveLength(1);
    await api.call("DELETE", "/api/sessions/race/settings");
    await bridge.kill("SIGTERM");
    bridges.splice(bridges.indexOf(bridge), 1);
  });
});

describe("bridge failover", () => {
  it("moves 20 connected sessions from a killed bridge to the live one without new QRs", async () => {
    const first = startBridgeProcess(
      stack.baseUrl,
      "bridge-a",
      await createBridgeCredential(api, "bridge-a"),
    );
    bridges.push(first);
    await eventually(
      async () => (first.lines.some((l) => l.includes("fleet link open")) ? true : undefined),
      20_000,
      "bridge-a to join",
    );
    const ids = Array.from({ length: SESSIONS }, (_, i) => `fo-${i}`);
    const accounts = new Map<string, string>();
    // Paired four at a time: sequential pairing alone took most of the test budget on a loaded CI box.
    for (let i = 0; i < ids.length; i += 4) {
      const batch = ids.slice(i, i + 4);
      const paired = await Promise.all(batch.map((id) => connectedSession(api, id)));
      for (const [j, id] of batch.entries()) accounts.set(id, paired[j] ?? "");
    }

    const second = startBridgeProcess(
      stack.baseUrl,
      "bridge-b",
      await createBridgeCredential(api, "bridge-b"),
    );
    bridges.push(second);
    await eventually(
      async () => (second.lines.some((l) => l.includes("fleet link open")) ? true : undefined),
      20_000,
      "bridge-b to join",
    );

    await first.kill("SIGKILL");

    for (const id of ids) {
      const back = await eventually(
        async () => {
          const d = await detail(id);
          return d.state === "connected" && d.hasInstance ? d : undefined;
        },
        30_000,
        `${id} to reconnect on bridge-b`,
      );
      expect(back.me?.id).toBe(accounts.get(id)); // the same linked account: credentials survived the kill
    }
    const qrsOnSecond = second.lines.filter((line) => line.includes('"whatsapp qr"'));
    expect(qrsOnSecond).toEqual([]);
  }, 240_000);
});
