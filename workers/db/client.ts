import { drizzle } from "drizzle-orm/d1";
import { meteredD1 } from "../meter/meter";
import * as schema from "./schema";

export type Db = ReturnType<typeof createDatabase>;

const createDatabase = (d1: D1Database) => drizzle(meteredD1(d1), { schema });

/**
 * Building a drizzle instance walks the whole schema to extract its relations, which profiled at
 * about 15 % of a simple authenticated GET; one instance per D1 binding object is enough, since the
 * instance holds nothing but the binding and that derived config.
 */
const instances = new WeakMap<D1Database, Db>();

export function database(d1: D1Database): Db {
  let db = instances.get(d1);
  if (!db) {
    db = createDatabase(d1);
    instances.set(d1, db);
  }
  return db;
}

export const newId = (): string => crypto.randomUUID();

export const iso = (ms: number): string => new Date(ms).toISOString();
