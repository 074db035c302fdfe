import type { ContactInfo, NetworkEvent } from "../../../bridge/src/protocol/messaging";
import { type Outcome, type SessionContext, success } from "../context";

/**
 * The session's address book: what WhatsApp told us about each contact (names, picture) plus whether
 * this account blocked it. Fed by `contacts` network events; read locally, so listing needs no
 * connection.
 */

export const CONTACTS_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS contacts (
     jid TEXT PRIMARY KEY, lid TEXT, name TEXT, notify TEXT, verified_name TEXT, img_url TEXT,
     blocked INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL)`,
];

type ContactRow = {
  jid: string;
  lid: string | null;
  name: string | null;
  notify: string | null;
  verified_name: string | null;
  img_url: string | null;
  blocked: number;
  updated_at: number;
};

export interface ContactResource {
  jid: string;
  lid: string | null;
  name: string | null;
  notify: string | null;
  verifiedName: string | null;
  profilePic: string | null;
  blocked: boolean;
  updatedAt: string;
}

export interface ContactsPage {
  contacts: ContactResource[];
  meta: { total: number; page: number; limit: number | "all"; totalPages: number };
}

const toResource = (row: ContactRow): ContactResource => ({
  jid: row.jid,
  lid: row.lid,
  name: row.name,
  notify: row.notify,
  verifiedName: row.verified_name,
  profilePic: row.img_url,
  blocked: row.blocked === 1,
  updatedAt: new Date(row.updated_at).toISOString(),
});

function findContact(sql: SqlStorage, jid: string): ContactRow | null {
  return sql.exec<ContactRow>("SELECT * FROM contacts WHERE jid = ?", jid).toArray()[0] ?? null;
}

function writeContact(sql: SqlStorage, row: ContactRow): void {
  sql.exec(
    `INSERT OR REPLACE INTO contacts (jid, lid, name, notify, verified_name, img_url, blocked, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    row.jid,
    row.lid,
    row.name,
    row.notify,
    row.verified_name,
    row.img_url,
    row.blocked,
    row.updated_at,
  );
}

/** Empty strings mean "not told", as WhatsApp sends partial contact updates. */
const given = (value: string | undefined, previous: string | null): string | null =>
  value ? value : previous;

/** The contact after `info`; null when nothing changes, so repeated syncs stay silent. */
function merge(before: ContactRow | null, info: ContactInfo, now: number): ContactRow | null {
  const after: ContactRow = {
    jid: info.jid,
    lid: given(info.lid, before?.lid ?? null),
    name: given(info.name, before?.name ?? null),
    notify: given(info.notify, before?.notify ?? null),
    verified_name: given(info.verifiedName, before?.verified_name ?? null),
    // `null` is an explicit "picture removed"; absent keeps what we had.
    img_url: info.imgUrl === undefined ? (before?.img_url ?? null) : info.imgUrl || null,
    blocked: before?.blocked ?? 0,
    updated_at: now,
  };
  const changed =
    !before ||
    (["lid", "name", "notify", "verified_name", "img_url"] as const).some(
      (key) => before[key] !== after[key],
    );
  return changed ? after : null;
}

/** Stores contact changes and emits one `contact.update` per contact that actually changed. */
export function applyContactsEvent(
  ctx: SessionContext,
  event: Extract<NetworkEvent, { kind: "contacts" }>,
): void {
  for (const info of event.contacts) {
    const after = merge(findContact(ctx.sql, info.jid), info, ctx.now());
    if (!after) continue;
    writeContact(ctx.sql, after);
    const { updatedAt: _updatedAt, ...contact } = toResource(after);
    ctx.emit("contact.update", contact);
  }
}

/** LIKE pattern matching `text` anywhere, with the wildcard characters taken literally. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

const SEARCH =
  "(name LIKE ?1 ESCAPE '\\' OR notify LIKE ?1 ESCAPE '\\' OR verified_name LIKE ?1 ESCAPE '\\' " +
  "OR jid LIKE ?1 ESCAPE '\\' OR lid LIKE ?1 ESCAPE '\\')";

/**
 * A person's other address, from the LID ↔ phone-number pairs this table keeps (each pair the bridge
 * learns, from Baileys' mapping events, the phone number a message carries beside a LID, or history
 * sync, is a row with the number as `jid` and the LID as `lid`): the phone number of a bare
 * `<digits>@lid`, or the LID of a bare number. Null when the pair is not known, and for anything
 * else (groups).
 */
export function otherAddress(sql: SqlStorage, bare: string): string | null {
  let rows: { other: string | null }[] = [];
  if (bare.endsWith("@lid"))
    rows = sql
      .exec<{ other: string }>("SELECT jid AS other FROM contacts WHERE lid = ? LIMIT 1", bare)
      .toArray();
  else if (bare.endsWith("@s.whatsapp.net"))
    rows = sql
      .exec<{ other: string | null }>("SELECT lid AS other FROM contacts WHERE jid = ?", bare)
      .toArray();
  return rows[0]?.other ?? null;
}

/** At most this many contacts see a status posted without `mentions` (docs/messaging.md). */
export const STATUS_AUDIENCE_MAX = 1000;

/**
 * Who sees a status posted without `mentions`: the contacts known by phone number and not blocked,
 * most recently updated first, at most STATUS_AUDIENCE_MAX. WhatsApp shows a status only to the
 * JIDs the post lists; LID-only rows are left out (the send fans out by number).
 */
export function statusAudience(sql: SqlStorage): string[] {
  return sql
    .exec<{ jid: string }>(
      `SELECT jid FROM contacts WHERE jid LIKE '%@s.whatsapp.net' AND blocked = 0
       ORDER BY updated_at DESC, jid LIMIT ?`,
      STATUS_AUDIENCE_MAX,
    )
    .toArray()
    .map((row) => row.jid);
}

export const contactsApi = {
  /** `limit` null is the reference's `limit=all`. Sorted by the name a user would see, then JID. */
  "contact.list": (
    ctx: SessionContext,
    input: { page: number; limit: number | null; search?: string },
  ): Outcome<ContactsPage> => {
    const where = input.search ? `WHERE ${SEARCH}` : "";
    const args = input.search ? [containing(input.search)] : [];
    const total = ctx.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM contacts ${where}`, ...args).one().n;
    const order = "ORDER BY COALESCE(name, notify, verified_name, jid) COLLATE NOCASE, jid";
    const rows =
      input.limit === null
        ? ctx.sql.exec<ContactRow>(`SELECT * FROM contacts ${where} ${order}`, ...args).toArray()
        : ctx.sql
            .exec<ContactRow>(
              `SELECT * FROM contacts ${where} ${order} LIMIT ? OFFSET ?`,
              ...args,
              input.limit,
              (input.page - 1) * input.limit,
            )
            .toArray();
    const totalPages = input.limit === null ? (total > 0 ? 1 : 0) : Math.ceil(total / input.limit);
    return success({
      contacts: rows.map(toResource),
      meta: { total, page: input.limit === null ? 1 : input.page, limit: input.limit ?? "all", totalPages },
    });
  },

  "contact.block": async (
    ctx: SessionContext,
    input: { jid: string; block: boolean },
  ): Promise<Outcome<{ jid: string; blocked: boolean }>> => {
    const result = await ctx.wa({ op: "contact.block", jid: input.jid, block: input.block });
    if (!result.ok) return result;
    const before = findContact(ctx.sql, input.jid);
    writeContact(ctx.sql, {
      jid: input.jid,
      lid: before?.lid ?? null,
      name: before?.name ?? null,
      notify: before?.notify ?? null,
      verified_name: before?.verified_name ?? null,
      img_url: before?.img_url ?? null,
      blocked: input.block ? 1 : 0,
      updated_at: ctx.now(),
    });
    return success({ jid: input.jid, blocked: input.block });
  },
};
