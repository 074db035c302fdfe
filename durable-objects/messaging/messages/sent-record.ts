/**
 * The stored WhatsApp record of a message this account sent: what answers a recipient's resend
 * request. Only own messages, and only while their content is kept (a deletion wipes `raw`).
 */
export function sentRecord(sql: SqlStorage, id: string): string | null {
  const row = sql
    .exec<{ raw: string | null }>(
      "SELECT raw FROM messages WHERE id = ? AND from_me = 1 AND raw IS NOT NULL ORDER BY n DESC LIMIT 1",
      id,
    )
    .toArray()[0];
  return row?.raw ?? null;
}
