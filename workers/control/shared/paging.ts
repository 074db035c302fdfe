import { z } from "@hono/zod-openapi";
import { count, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Context } from "hono";
import type { Db } from "../../db/client";

/**
 * Every paged list of the control plane says how many rows match (`X-Total-Count`) and where the next
 * page starts (`X-Next-Cursor`, absent on the last page). Counting is exact up to TOTAL_CAP; past it the
 * count stops there and `X-Total-Capped: true` says the total is at least that (a company of 100,000
 * issues must not pay for counting them on every page: issue 31, docs/decisions.md).
 */
export const TOTAL_CAP = 10_000;

export interface Total {
  count: number;
  capped: boolean;
}

/**
 * The statement counting rows of `table` matching `where` up to one past TOTAL_CAP (so a capped count
 * is told from an exact one); a builder, so a caller may put it in a `db.batch` with its page.
 */
export function cappedCountQuery(db: Db, table: SQLiteTable, where: SQL | undefined) {
  const matches = db
    .select({ one: sql`1`.as("one") })
    .from(table)
    .where(where)
    .limit(TOTAL_CAP + 1)
    .as("matches");
  return db.select({ n: count() }).from(matches);
}

/** The total a cappedCountQuery read. */
export function totalOf(rows: ReadonlyArray<{ n: number }>): Total {
  const n = rows[0]?.n ?? 0;
  return { count: Math.min(n, TOTAL_CAP), capped: n > TOTAL_CAP };
}

/** Rows of `table` matching `where`, counted up to TOTAL_CAP. */
export async function cappedTotal(db: Db, table: SQLiteTable, where: SQL | undefined): Promise<Total> {
  return totalOf(await cappedCountQuery(db, table, where));
}

/** The headers of one page, for the OpenAPI document; `cursorParam` is the query parameter they feed. */
export function pageHeaders(noun: string, cursorParam: string) {
  return z.object({
    "X-Total-Count": z.string().openapi({
      description: `How many ${noun} match the filters, across all pages (at most ${TOTAL_CAP}: see X-Total-Capped)`,
      example: "250",
    }),
    "X-Total-Capped": z
      .literal("true")
      .optional()
      .openapi({
        description: `Present when more than ${TOTAL_CAP} match: X-Total-Count is then a lower bound`,
      }),
    "X-Next-Cursor": z
      .string()
      .optional()
      .openapi({
        description: `Pass as \`${cursorParam}\` for the next page; absent on the last page`,
      }),
  });
}

/** Sets a page's headers on the response. */
export function setPageHeaders(c: Context, total: Total, nextCursor: string | null): void {
  c.header("X-Total-Count", String(total.count));
  if (total.capped) c.header("X-Total-Capped", "true");
  if (nextCursor !== null) c.header("X-Next-Cursor", nextCursor);
}

/** The page of `limit` from `limit + 1` rows read, and the cursor of the next page when there is one. */
export function pageOf<T>(rows: readonly T[], limit: number, cursorOf: (last: T) => string) {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { rows: page, nextCursor: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}
