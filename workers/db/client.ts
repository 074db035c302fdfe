import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = ReturnType<typeof database>;

export function database(d1: D1Database) {
  return drizzle(d1, { schema });
}

export const newId = (): string => crypto.randomUUID();

export const iso = (ms: number): string => new Date(ms).toISOString();

/** D1 reports a violated UNIQUE index as an error whose message names the constraint. */
export function isUniqueViolation(error: unknown): boolean {
  const text = error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error);
  return text.includes("UNIQUE constraint failed");
}
