/** The resource URIs a session subscribed to, in its object's SQLite: a rebuilt session subscribes again. */
export class SubscriptionStore {
  #ready = false;

  constructor(private readonly sql: SqlStorage) {}

  list(): string[] {
    return this.#table()
      .exec<{ uri: string }>("SELECT uri FROM mcp_subscriptions ORDER BY uri")
      .toArray()
      .map((row) => row.uri);
  }

  add(uri: string): void {
    this.#table().exec("INSERT OR IGNORE INTO mcp_subscriptions (uri) VALUES (?)", uri);
  }

  remove(uri: string): void {
    this.#table().exec("DELETE FROM mcp_subscriptions WHERE uri = ?", uri);
  }

  clear(): void {
    this.#table().exec("DELETE FROM mcp_subscriptions");
  }

  #table(): SqlStorage {
    if (!this.#ready) {
      this.sql.exec("CREATE TABLE IF NOT EXISTS mcp_subscriptions (uri TEXT PRIMARY KEY)");
      this.#ready = true;
    }
    return this.sql;
  }
}
