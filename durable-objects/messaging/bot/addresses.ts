import { bareJid } from "./rules";

/**
 * A person's other address, from the session's LID ↔ phone-number store: the contacts table
 * (contacts/store.ts), where each pair the bridge learns (Baileys' mapping events, the phone number a
 * message carries beside a LID, history sync) is a row with the number as `jid` and the LID as `lid`.
 * Answers the phone number of a `<digits>@lid` sender or the LID of a number; null when the pair is
 * not known, and for anything else (groups).
 */
export function otherAddress(sql: SqlStorage, jid: string): string | null {
  const bare = bareJid(jid);
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
