import { sql } from "drizzle-orm";
import type { Env } from "../core/env";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { users } from "../db/schema";
import { timingSafeEqual } from "./crypto";
import { hashPassword, PASSWORD_MIN_LENGTH } from "./passwords";
import { normaliseEmail } from "./user-store";

/**
 * Creates the first SUPERADMIN from ADMIN_EMAIL / ADMIN_PASSWORD, lazily, when someone logs in
 * with exactly those credentials while no SUPERADMIN exists. The INSERT carries the "none exists"
 * condition itself, so concurrent first logins create one admin, and a later change of the
 * secrets never overwrites a real account. Missing or too-short secrets create nobody (fail closed).
 */
export async function ensureBootstrapAdmin(
  db: Db,
  env: Env,
  email: string,
  password: string,
): Promise<boolean> {
  const adminEmail = env.ADMIN_EMAIL ? normaliseEmail(env.ADMIN_EMAIL) : "";
  const adminPassword = env.ADMIN_PASSWORD ?? "";
  if (!adminEmail || adminPassword.length < PASSWORD_MIN_LENGTH) return false;
  if (normaliseEmail(email) !== adminEmail || !(await timingSafeEqual(password, adminPassword))) return false;

  const now = Date.now();
  const passwordHash = await hashPassword(adminPassword);
  const result = await db.run(sql`
    INSERT INTO ${users} (id, email, name, image, role, password_hash, created_at, updated_at)
    SELECT ${newId()}, ${adminEmail}, 'Administrator', NULL, 'SUPERADMIN', ${passwordHash}, ${now}, ${now}
    WHERE NOT EXISTS (SELECT 1 FROM ${users} WHERE role = 'SUPERADMIN')
      AND NOT EXISTS (SELECT 1 FROM ${users} WHERE email = ${adminEmail})`);
  return result.meta.changes > 0;
}
