/**
 * Counts what a write costs in round trips: D1 calls (a statement executed alone, or one `batch`)
 * and Durable Object calls. Tests hold each operation to a budget with it ("create issue: ≤ 2 D1
 * round trips, ≤ 1 DO call": test/workers/control/write-budget.test.ts), a structural check that
 * does not depend on the machine's speed (issue 31, docs/control-plane-internals.md "Write budget").
 *
 * The counters are per isolate, not per request: a Durable Object's own D1 calls run in the same
 * isolate as the Worker here (and in the tests), and a test runs one request at a time, so what it
 * reads between two snapshots is what one request caused. In production they only ever grow; nothing
 * reads them. Counting is an integer increment beside a network round trip, so it is always on
 * rather than a second code path the tests would not exercise.
 */
export interface MeterReading {
  /** Round trips to D1: each statement run alone, and each batch. */
  d1RoundTrips: number;
  /** Statements sent to D1, batched or not. */
  d1Statements: number;
  /** Durable Object stubs taken through `namespaceOf`, each for one call (RPC method or fetch). */
  doCalls: number;
}

const reading: MeterReading = { d1RoundTrips: 0, d1Statements: 0, doCalls: 0 };

/** The SQL of each statement prepared while a test records (null otherwise: nothing is kept). */
let recorded: string[] | null = null;

/**
 * Starts keeping the text of every statement prepared; the function returned stops and hands them
 * over. Tests explain the queries an endpoint really sends (test/workers/control/issues/list-plans.test.ts).
 */
export function recordStatements(): () => string[] {
  const statements: string[] = [];
  recorded = statements;
  return () => {
    if (recorded === statements) recorded = null;
    return statements;
  };
}

/** What has been counted so far; subtract two readings for what happened between them. */
export const meterReading = (): MeterReading => ({ ...reading });

export const meterSince = (start: MeterReading): MeterReading => ({
  d1RoundTrips: reading.d1RoundTrips - start.d1RoundTrips,
  d1Statements: reading.d1Statements - start.d1Statements,
  doCalls: reading.doCalls - start.doCalls,
});

/**
 * The D1 binding as drizzle and raw callers use it, counting. Statements are counted when prepared
 * (a prepared statement runs once, alone or in a batch: wrapping statements themselves would break
 * `batch`, which only takes D1's own objects); a batch takes back the round trips its statements were
 * counted as and adds its one.
 */
export function meteredD1(d1: D1Database): D1Database {
  return new Proxy(d1, {
    get(target, property) {
      if (property === "prepare")
        return (query: string) => {
          reading.d1Statements++;
          reading.d1RoundTrips++;
          recorded?.push(query);
          return target.prepare(query);
        };
      if (property === "batch")
        return (statements: D1PreparedStatement[]) => {
          reading.d1RoundTrips += 1 - statements.length;
          return target.batch(statements);
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** A Durable Object stub was taken to call the object (core/env.ts `namespaceOf`). */
export function countDurableObjectHop(): void {
  reading.doCalls++;
}
