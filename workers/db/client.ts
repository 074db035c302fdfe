import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = ReturnType<typeof database>;

export function database(d1: D1Database) {
  return drizzle(d1, { schema });
}

export const newId = (): string => crypto.randomUUID();

export const iso = (ms: number): string => new Date(ms).toISOString();
