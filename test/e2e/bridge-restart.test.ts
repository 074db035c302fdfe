// Issue 18, with real bridge processes: a bridge restarted with the same BRIDGE_ID within the grace
// period (what the docs recommend) used to leave its sessions "reconnecting" or falsely "Connected",
// sends answering 503; and two processes with one id kicked each other off about four times a second.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { type BridgeProcess, createBridgeCredential, startBridgeProcess } from "../support/bridge-process.ts";
import { connectedSession, jidPath, personJid } from "../support/messaging.ts";
import { type Stack, startStack } from "../support/stack.ts";

type Detail = { state: string; me: { id: string } | null; hasInstance: boolean };
type Envelope<T> = { data: T };
const ID = "bridge-r";
const SESSIONS = ["rs-1", "rs-2", "rs-3"];

let stack: Stack;
let api: ApiClient;
let token: string;
const bridges: BridgeProcess[] = [];

beforeAll(async () => {
  // A grace period longer than the test waits: the sessions can only come back through the restarted
  // bridge's hello, not by being moved after the grace period (to the same bridge, as old code did).
  stack = await startStack({ env: { SIMULATOR: "1", BRIDGE: "0", FLEET_GRACE_MS: "120000" } });
  api = await adminClient(stack.baseUrl);
  token = await createBridgeCredential(api, ID);
});

afterAll(async () => {
  for (const bridge of bridges) await bridge.kill("SIGTERM");
  await stack?.stop();
});

const detail = async (id: string) =>
  (await api.call<Envelope<Detail>>("GET", `/api/sessions/${id}`)).body.data;
const linkOpens = (bridge: BridgeProcess) =>
  bridge.lines.filter((l) => l.includes('"fleet link open"')).length;

async function startBridge(): Promise<BridgeProcess> {
  const bridge = startBridgeProcess(stack.baseUrl, ID, token);
  bridges.push(bridge);
  return bridge;
}

async function joined(bridge: BridgeProcess): Promise<void> {
  await eventually(async () => (linkOpens(bridge) > 0 ? true : undefined), 20_000, `${ID} to join`);
}

describe("a bridge restarted with the same BRIDGE_ID", () => {
  it("refuses a second process with the id while the first is live, without flapping", async () => {
    const first = await startBridge();
    await joined(first);
    const twin = await startBridge();
    await eventually(
      async () =>
        twin.lines.some((l) => l.includes("ANOTHER PROCESS IS CONNECTED AS bridge-r")) ? true : undefined,
      20_000,
      "the twin to be refused",
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(linkOpens(first)).toBe(1);
    expect(linkOpens(twin)).toBe(0);
    await twin.kill("SIGTERM");
    bridges.splice(bridges.indexOf(twin), 1);
  }, 60_000);

  it("gets its sessions back within the grace period: Connected for real, sends work", async () => {
    const accounts = new Map<string, string>();
    for (const id of SESSIONS) accounts.set(id, await connectedSession(api, id));
    const first = bridges[0];
    if (!first) throw new Error("no bridge");
    await first.kill("SIGKILL");
    bridges.splice(bridges.indexOf(first), 1);

    const second = await startBridge();
    await joined(second);
    for (const id of SESSIONS) {
      const back = await eventually(
        async () => {
          const d = await detail(id);
          return d.state === "connected" && d.hasInstance ? d : undefined;
        },
        30_000,
        `${id} to come back on the restarted bridge`,
      );
      expect(back.me?.id).toBe(accounts.get(id));
      const sent = await api.call("POST", `/api/messages/${id}/${jidPath(personJid())}/send`, {
        message: { text: "after the restart" },
      });
      expect(sent.status).toBe(200);
    }
    expect(second.lines.filter((line) => line.includes('"whatsapp qr"'))).toEqual([]);
  }, 120_000);
});
