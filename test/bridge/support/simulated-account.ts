/** A linked account on a simulated network, driven directly through the seam (no edge, no runner). */
import { expect } from "vitest";
import type { NetworkEvent } from "../../../bridge/src/protocol/messaging.ts";
import type { Operation } from "../../../bridge/src/protocol/operations.ts";
import {
  type Json,
  OperationError,
  type PerformResult,
  type PreparedMedia,
  type SocketHandlers,
  type WhatsAppSocket,
} from "../../../bridge/src/protocol/seam.ts";
import type { SimulatorNetwork } from "../../../bridge/src/simulator/simulator.ts";
import { waitFor } from "./wait.ts";

export interface SimulatedAccount {
  me: string;
  socket: WhatsAppSocket;
  events: NetworkEvent[];
  perform(operation: Operation, media?: PreparedMedia | null): Promise<PerformResult>;
  control(args: Record<string, Json>): Promise<Json>;
  /** Events of one kind, narrowed. */
  seen<K extends NetworkEvent["kind"]>(kind: K): Array<Extract<NetworkEvent, { kind: K }>>;
}

export function handlersFor(events: NetworkEvent[], opened: { value: boolean }): SocketHandlers {
  return {
    onQr: () => {},
    onConnecting: () => {},
    onOpen: () => {
      opened.value = true;
    },
    onClose: () => {},
    persistAuth: async () => {},
    onNetworkEvent: (event) => events.push(event),
  };
}

export async function linkedAccount(
  network: SimulatorNetwork,
  sessionId: string,
  number: string,
  name = `User ${number.slice(-4)}`,
): Promise<SimulatedAccount> {
  const me = `${number}@s.whatsapp.net`;
  const events: NetworkEvent[] = [];
  const opened = { value: false };
  const socket = network.open({
    sessionId,
    auth: { creds: { registered: true, me: { id: me, name } }, keys: {} },
    handlers: handlersFor(events, opened),
  });
  await waitFor(() => opened.value, `${sessionId} open`);
  const simulate = socket.simulate;
  if (!simulate) throw new Error("not a simulated socket");
  return {
    me,
    socket,
    events,
    perform: (operation, media = null) => socket.perform(operation, media),
    control: (args) => simulate.control(args),
    seen: <K extends NetworkEvent["kind"]>(kind: K) =>
      events.filter((event): event is Extract<NetworkEvent, { kind: K }> => event.kind === kind),
  };
}

/** The refusal a promise ends in, as `{status, message}`. */
export async function refusal(promise: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(OperationError);
    if (error instanceof OperationError) return { status: error.status, message: error.message };
  }
  throw new Error("expected the operation to be refused");
}

/** A JSON object, for assertions on what an operation or control answered. */
export function record(value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new Error("expected an object");
  return value as Record<string, unknown>;
}

export function list(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new Error("expected an array");
  return value;
}

export const person = (number: string) => `${number}@s.whatsapp.net`;
