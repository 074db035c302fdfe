import { database } from "../../db/client";
import type { LiveChange, LiveFeed } from "../live";

/**
 * The issue board's live news, read from the company's activity log (issue 31): every change the
 * board shows writes its activity row in the same D1 batch as the change, so the log holds exactly the
 * committed changes, in commit order (`seq`). The CompanyFeed follows it with a cursor kept in its own
 * storage and turns each entry into one board event; a writer's announcement after its commit is only
 * a nudge to look now. A writer that dies between its commit and that nudge costs the board nothing
 * but latency: the next nudge, the next look while a page is open (every POLL_MS), or the next page
 * to open reads it. docs/decisions.md, "The board follows the activity log".
 */

/** The activity actions on an issue that change what the board shows, and the event each becomes. */
const BOARD_EVENTS: Readonly<Record<string, "issue.created" | "issue.updated" | "issue.deleted">> = {
  "issue.created": "issue.created",
  "issue.updated": "issue.updated",
  "issue.checked_out": "issue.updated",
  "issue.released": "issue.updated",
  "issue.approval_linked": "issue.updated",
  "issue.approval_unlinked": "issue.updated",
  "issue.deleted": "issue.deleted",
};
const ACTIONS = Object.keys(BOARD_EVENTS);

/** Entries read from D1 at a time. */
const PAGE = 200;
/** How far back the first page a company's board ever had hears of changes (see #firstCursor). */
const FIRST_LOOK_BACK_MS = 60_000;
/** A backlog longer than this many pages (a board nobody watched for long) is told as one `reset`. */
const MOST_PAGES = 2;

interface BoardEntry {
  seq: number;
  action: string;
  issueId: string;
  at: number;
  status: string | null;
  title: string | null;
  assigneeAgentId: string | null;
  assigneeUserId: string | null;
}

/** The entries after `cursor` the board shows (with their issue as it is now), and the company's newest seq. */
function readEntries(d1: D1Database, companyId: string, cursor: number) {
  const client = database(d1).$client;
  return client.batch<unknown>([
    client
      .prepare(
        `SELECT a.seq, a.action, a.entity_id AS issueId, a.created_at AS at, i.status, i.title,
           i.assignee_agent_id AS assigneeAgentId, i.assignee_user_id AS assigneeUserId
         FROM activity_log a LEFT JOIN issues i ON i.id = a.entity_id
         WHERE a.company_id = ?1 AND a.seq > ?2 AND a.entity_type = 'issue'
           AND a.action IN (${ACTIONS.map((_, i) => `?${i + 4}`).join(", ")})
         ORDER BY a.seq LIMIT ?3`,
      )
      .bind(companyId, cursor, PAGE, ...ACTIONS),
    // The same transaction as the entries: every entry up to this seq has committed (seq is
    // AUTOINCREMENT and D1 commits one transaction at a time), so none can appear behind the cursor.
    client.prepare("SELECT max(seq) AS seq FROM activity_log WHERE company_id = ?").bind(companyId),
  ]) as Promise<[D1Result<BoardEntry>, D1Result<{ seq: number | null }>]>;
}

function changeOf(companyId: string, entry: BoardEntry): LiveChange {
  const kind = BOARD_EVENTS[entry.action] ?? "issue.updated";
  const where = { kind, companyId, issueId: entry.issueId };
  // A deleted issue has no row any more; nor, later, does one deleted after this entry.
  if (kind === "issue.deleted" || entry.status === null || entry.title === null) return where;
  const { status, title, assigneeAgentId, assigneeUserId } = entry;
  return { ...where, status, title, assigneeAgentId, assigneeUserId };
}

/**
 * The board's half of a CompanyFeed: its cursor in the activity log (a row of the object's SQLite,
 * written in the same synchronous step as the events it numbered, so a crash of the object cannot
 * tell an entry twice or skip one) and the rounds that move it. Rounds never overlap.
 */
export class BoardFromLog {
  #running: Promise<void> | null = null;
  #again = false;
  #ready = false;
  /** The company this object serves, once noted (it never changes: the object is named by it). */
  #company: string | null = null;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly db: D1Database,
    private readonly feed: LiveFeed,
  ) {}

  /**
   * Looks for news in the log. With no page open it only notes the company: the next page to open
   * reads what it missed first (`catchUp`), so nudges nobody listens to cost no D1 read.
   */
  nudge(companyId: string | undefined): Promise<void> {
    if (companyId !== undefined) this.#noteCompany(companyId);
    if (!this.feed.watching()) return Promise.resolve();
    return this.catchUp();
  }

  /** Tells the feed every entry past the cursor (before a page's hello, and on each look). */
  catchUp(companyId?: string): Promise<void> {
    if (companyId !== undefined) this.#noteCompany(companyId);
    this.#again = true;
    this.#running ??= this.#rounds();
    return this.#running;
  }

  async #rounds(): Promise<void> {
    try {
      while (this.#again) {
        this.#again = false;
        await this.#round();
      }
    } catch (error) {
      // D1 failed a read: the cursor stays, and the next look or nudge reads the same entries again.
      console.error(JSON.stringify({ level: "error", msg: "board log read failed", error: String(error) }));
    } finally {
      this.#running = null;
    }
  }

  async #round(): Promise<void> {
    const state = this.#state();
    if (state === null) return;
    let cursor = state.cursor ?? (await this.#firstCursor(state.companyId));
    for (let pages = 1; ; pages++) {
      const [entries, newest] = await readEntries(this.db, state.companyId, cursor);
      const last = Math.max(cursor, newest.results[0]?.seq ?? 0);
      // Synchronous from here to the cursor's write: the events and the cursor commit together.
      const rows = entries.results;
      const more = rows.length === PAGE;
      if (more && pages >= MOST_PAGES) {
        this.feed.reset();
        this.#saveCursor(last);
        return;
      }
      for (const row of rows) this.feed.publish(changeOf(state.companyId, row), row.at);
      cursor = more ? (rows.at(-1)?.seq ?? last) : last;
      this.#saveCursor(cursor);
      if (!more) return;
    }
  }

  /**
   * Where the first page this company's board ever had starts: its news is not the company's history,
   * but the last FIRST_LOOK_BACK_MS of it is told, so a page drawn just before a change still hears
   * of it (its `hello` names that change's time, as on a feed that was already running).
   */
  async #firstCursor(companyId: string): Promise<number> {
    const row = await database(this.db)
      .$client.prepare("SELECT max(seq) AS seq FROM activity_log WHERE company_id = ? AND created_at < ?")
      .bind(companyId, Date.now() - FIRST_LOOK_BACK_MS)
      .first<{ seq: number | null }>();
    return row?.seq ?? 0;
  }

  #sql(): SqlStorage {
    const sql = this.ctx.storage.sql;
    if (!this.#ready) {
      sql.exec(
        "CREATE TABLE IF NOT EXISTS board_cursor (id INTEGER PRIMARY KEY CHECK (id = 0), company_id TEXT NOT NULL, seq INTEGER)",
      );
      this.#ready = true;
    }
    return sql;
  }

  #state(): { companyId: string; cursor: number | null } | null {
    const row = this.#sql()
      .exec<{ company_id: string; seq: number | null }>(
        "SELECT company_id, seq FROM board_cursor WHERE id = 0",
      )
      .toArray()[0];
    return row ? { companyId: row.company_id, cursor: row.seq } : null;
  }

  #noteCompany(companyId: string): void {
    if (this.#company === companyId) return;
    this.#company = companyId;
    this.#sql().exec(
      "INSERT INTO board_cursor (id, company_id, seq) VALUES (0, ?, NULL) ON CONFLICT (id) DO NOTHING",
      companyId,
    );
  }

  #saveCursor(seq: number): void {
    this.#sql().exec("UPDATE board_cursor SET seq = ? WHERE id = 0", seq);
  }
}
