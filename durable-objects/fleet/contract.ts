import type { Env } from "../../workers/core/env";
import { namespaceOf } from "../../workers/core/env";

export interface FleetSnapshot {
  bridges: { id: string; capacity: number; connected: boolean; sessions: number }[];
  pending: number;
}

/** What sessions ask of the fleet of bridges (BridgeFleet implements it); bridges dial its `fetch`. */
export interface FleetObject extends Rpc.DurableObjectBranded {
  /** Makes sure a live bridge holds `sessionId`; idempotent. Returns the bridge id, or null (pending). */
  assign(sessionId: string): Promise<string | null>;
  /** The session needs no bridge any more: its bridge is told to let go. */
  release(sessionId: string): Promise<void>;
  snapshot(): Promise<FleetSnapshot>;
  /** The bridge's credential was revoked: its sockets close and its sessions move at once. */
  disconnect(bridge: string): Promise<void>;
}

/** The one BridgeFleet of the deployment. */
export const fleetObject = (env: Env): DurableObjectStub<FleetObject> =>
  namespaceOf<FleetObject>(env.FLEET).getByName("global");
