/** Starts a FleetLink (the whole bridge minus main.ts) against a fake edge, with fast backoffs. */
import { toWebSocketUrl } from "../../../bridge/src/config.ts";
import type { Operation } from "../../../bridge/src/protocol/operations.ts";
import type {
  PerformResult,
  PreparedMedia,
  SocketHandlers,
  WhatsAppNetwork,
  WhatsAppSocket,
} from "../../../bridge/src/protocol/seam.ts";
import { FleetLink } from "../../../bridge/src/sessions/fleet-link.ts";
import type { Log, LogLevel } from "../../../bridge/src/shared/log.ts";
import { type SimulatorOptions, simulatorNetwork } from "../../../bridge/src/simulator/simulator.ts";
import { type FakeEdge, startFakeEdge } from "./fake-edge.ts";
import { waitFor } from "./wait.ts";

export interface LogLine {
  level: LogLevel;
  msg: string;
  fields: Record<string, unknown>;
}

export interface TestBridge<N extends WhatsAppNetwork> {
  fleet: FleetLink;
  network: N;
  logs: LogLine[];
  /** Assigns `sessionId` through the fleet socket and waits until its session link is accepted. */
  assign(sessionId: string): Promise<void>;
}

export interface TestBridgeOptions {
  token?: string;
  capacity?: number;
  slowRetryMs?: number;
}

export async function startBridge<N extends WhatsAppNetwork>(
  edge: FakeEdge,
  network: N,
  options: TestBridgeOptions = {},
): Promise<TestBridge<N>> {
  const logs: LogLine[] = [];
  const log: Log = (level, msg, fields = {}) => logs.push({ level, msg, fields });
  const fleet = new FleetLink({
    edgeUrl: toWebSocketUrl(edge.url),
    token: options.token ?? edge.token,
    bridgeId: "test-bridge",
    capacity: options.capacity ?? 1000,
    network,
    log,
    linkBackoff: { baseMs: 20, factor: 2, capMs: 200 },
    whatsappBackoff: { baseMs: 20, factor: 2, capMs: 200 },
    slowRetryMs: options.slowRetryMs ?? 60_000,
  });
  const hellos = () => edge.fleet.frames.filter((frame) => frame.type === "hello").length;
  const hellosBefore = hellos();
  fleet.start();
  const assign = async (sessionId: string) => {
    // This bridge's own hello: the fleet socket the edge holds is this bridge's.
    await waitFor(() => hellos() > hellosBefore && edge.fleet.socket, "fleet hello");
    const before = edge.session(sessionId).connections;
    edge.sendFleet({ type: "assign", session: sessionId });
    await waitFor(() => edge.session(sessionId).connections > before, `session ${sessionId} link`);
  };
  return { fleet, network, logs, assign };
}

export function startSimulatedBridge(
  edge: FakeEdge,
  options: TestBridgeOptions & { simulator?: SimulatorOptions } = {},
) {
  return startBridge(edge, simulatorNetwork(options.simulator), options);
}

/** A fake edge and a simulated bridge dialling it; `cleanup` is given what stops both. */
export async function edgeWithSimulatedBridge(
  cleanup: Array<() => Promise<void>>,
  options: Parameters<typeof startSimulatedBridge>[1] = {},
) {
  const edge = await startFakeEdge();
  const bridge = await startSimulatedBridge(edge, options);
  cleanup.push(
    () => edge.close(),
    () => bridge.fleet.shutdown(),
  );
  return { edge, bridge };
}

export type Perform = (operation: Operation, media: PreparedMedia | null) => Promise<PerformResult>;

/**
 * A network that hands its handlers to the test, so the test plays Baileys by hand. Operations go to
 * `perform` (default: answer nothing) and are recorded with the media the bridge prepared for them.
 */
export function captureNetwork(simulated = false, perform: Perform = async () => ({})) {
  const sockets: Array<{ handlers: SocketHandlers; closed: boolean }> = [];
  const performed: Array<{ operation: Operation; media: PreparedMedia | null }> = [];
  const network: WhatsAppNetwork = {
    simulated,
    open({ handlers }): WhatsAppSocket {
      const entry = { handlers, closed: false };
      sockets.push(entry);
      return {
        requestPairingCode: async () => "ABCD1234",
        logout: async () => {
          entry.closed = true;
        },
        close: () => {
          entry.closed = true;
        },
        perform: (operation, media) => {
          performed.push({ operation, media });
          return perform(operation, media);
        },
      };
    },
  };
  return { network, sockets, performed };
}
