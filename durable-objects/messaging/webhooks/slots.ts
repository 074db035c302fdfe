/**
 * Delivery slots: how many attempts each endpoint has in flight right now, per object. Memory is
 * enough: attempts live only as long as the invocation that started them, and a claimed delivery is
 * leased in SQLite (engine.ts), so one lost with its object is retried when the lease runs out.
 */

/** Attempts one webhook may have in flight at once: a slow receiver sees at most this many requests. */
export const MAX_IN_FLIGHT_PER_WEBHOOK = 4;
/** Slots bulk events (a paired phone's contacts) may hold, so other events always find one free. */
export const BULK_SLOTS = MAX_IN_FLIGHT_PER_WEBHOOK - 1;

type Flight = { endpointId: string; bulk: boolean };

/** Keyed by the object's SQL handle because objects of one class can share an isolate. */
const flights = new WeakMap<SqlStorage, Map<string, Flight>>();

function flightsOf(sql: SqlStorage): Map<string, Flight> {
  let map = flights.get(sql);
  if (!map) {
    map = new Map();
    flights.set(sql, map);
  }
  return map;
}

/** Free slots of the endpoint: for any event, and for bulk events (never more than `any`). */
export function freeSlots(sql: SqlStorage, endpointId: string): { any: number; bulk: number } {
  let all = 0;
  let bulk = 0;
  for (const flight of flightsOf(sql).values()) {
    if (flight.endpointId !== endpointId) continue;
    all++;
    if (flight.bulk) bulk++;
  }
  const any = Math.max(0, MAX_IN_FLIGHT_PER_WEBHOOK - all);
  return { any, bulk: Math.min(any, Math.max(0, BULK_SLOTS - bulk)) };
}

export function isFlying(sql: SqlStorage, deliveryId: string): boolean {
  return flightsOf(sql).has(deliveryId);
}

export function occupy(sql: SqlStorage, deliveryId: string, flight: Flight): void {
  flightsOf(sql).set(deliveryId, flight);
}

export function release(sql: SqlStorage, deliveryId: string): void {
  flightsOf(sql).delete(deliveryId);
}
