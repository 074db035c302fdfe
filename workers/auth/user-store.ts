import { and, asc, eq, isNull, ne, or, sql } from "drizzle-orm";
import type { PublicUser } from "../core/principal";
import type { Db } from "../db/client";
import { iso, newId } from "../db/client";
import { agentApiKeys, type Role, type UserRow, users, webSessions } from "../db/schema";
import { hashPassword } from "./passwords";

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

export function toPublicUser(row: Pick<UserRow, "id" | "name" | "email" | "image" | "role">): PublicUser {
  return { id: row.id, name: row.name, email: row.email, image: row.image, role: row.role };
}

export function toUserResource(row: UserRow) {
  return { ...toPublicUser(row), createdAt: iso(row.createdAt), updatedAt: iso(row.updatedAt) };
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.query.users.findFirst({ where: eq(users.email, normaliseEmail(email)) });
}

export async function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.query.users.findFirst({ where: eq(users.id, id) });
}

export async function listUsers(db: Db): Promise<UserRow[]> {
  return db.select().from(users).orderBy(asc(users.createdAt), asc(users.email));
}

export interface NewUser {
  name: string;
  email: string;
  password: string;
  role: Role;
  image?: string | null;
}

export async function insertUser(db: Db, input: NewUser): Promise<UserRow> {
  const now = Date.now();
  const row: UserRow = {
    id: newId(),
    name: input.name,
    email: normaliseEmail(input.email),
    image: input.image ?? null,
    role: input.role,
    passwordHash: await hashPassword(input.password),
    createdAt: now,
    updatedAt: now,
  };
  await db.insert(users).values(row);
  return row;
}

/** True when removing SUPERADMIN from `userId` would leave none (as one SQL condition). */
const keepsASuperadmin = (userId: string) =>
  or(
    ne(users.role, "SUPERADMIN"),
    sql`(SELECT count(*) FROM ${users} WHERE ${users.role} = 'SUPERADMIN' AND ${users.id} != ${userId}) > 0`,
  );

export interface UserPatch {
  name?: string;
  email?: string;
  image?: string | null;
  role?: Role;
  password?: string;
}

export type PatchOutcome =
  | { kind: "updated"; row: UserRow }
  | { kind: "not_found" }
  | { kind: "last_superadmin" };

/**
 * Applies a patch in one batch (one D1 transaction). Demoting the last SUPERADMIN is refused by
 * the UPDATE's own WHERE clause, so two concurrent demotions cannot both succeed. A password
 * change signs the user out of every browser session.
 */
export async function patchUser(db: Db, id: string, patch: UserPatch): Promise<PatchOutcome> {
  const values: Partial<UserRow> = { updatedAt: Date.now() };
  if (patch.name !== undefined) values.name = patch.name;
  if (patch.email !== undefined) values.email = normaliseEmail(patch.email);
  if (patch.image !== undefined) values.image = patch.image;
  if (patch.role !== undefined) values.role = patch.role;
  if (patch.password !== undefined) values.passwordHash = await hashPassword(patch.password);

  const demotes = patch.role !== undefined && patch.role !== "SUPERADMIN";
  const where = demotes ? and(eq(users.id, id), keepsASuperadmin(id)) : eq(users.id, id);
  const update = db.update(users).set(values).where(where).returning();
  const [updated] =
    patch.password !== undefined
      ? (await db.batch([update, db.delete(webSessions).where(eq(webSessions.userId, id))]))[0]
      : await update;
  if (updated) return { kind: "updated", row: updated };
  return (await findUserById(db, id)) ? { kind: "last_superadmin" } : { kind: "not_found" };
}

export type DeleteOutcome =
  | { kind: "deleted"; agentIds: string[] }
  | { kind: "not_found" }
  | { kind: "last_superadmin" };

/**
 * Deletes a user with their sessions, key and memberships (ON DELETE CASCADE), never the last
 * SUPERADMIN. The agent keys they minted are revoked in the same batch (they end with the person, as
 * with a removal from a company); the caller invalidates the returned agents' keys in the Keyring.
 */
export async function deleteUser(db: Db, id: string): Promise<DeleteOutcome> {
  const deletable = and(eq(users.id, id), keepsASuperadmin(id));
  const [revoked, deleted] = await db.batch([
    db
      .update(agentApiKeys)
      .set({ revokedAt: Date.now() })
      .where(
        and(
          eq(agentApiKeys.createdByUserId, id),
          isNull(agentApiKeys.revokedAt),
          sql`EXISTS (SELECT 1 FROM ${users} WHERE ${deletable})`,
        ),
      )
      .returning({ agentId: agentApiKeys.agentId }),
    db.delete(users).where(deletable).returning({ id: users.id }),
  ]);
  if (deleted.length > 0)
    return { kind: "deleted", agentIds: [...new Set(revoked.map((key) => key.agentId))] };
  return (await findUserById(db, id)) ? { kind: "last_superadmin" } : { kind: "not_found" };
}
