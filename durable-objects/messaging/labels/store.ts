import type { WaLabel } from "../../../bridge/src/protocol/messaging";
import { failure, type Outcome, type SessionContext, success } from "../context";

/**
 * Labels and their chat assignments. They are WhatsApp's (Business) labels: while WhatsApp is
 * connected each change is made on the account first (app state, so the phone shows it) and stored
 * after; without a connection they are kept here only. Changes made on the phone arrive as network
 * events (sync.ts). Ids are WhatsApp's: small numbers as strings. Names are unique per session
 * regardless of case.
 */
export const LABELS_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS labels (
     id TEXT PRIMARY KEY, name TEXT NOT NULL, name_key TEXT NOT NULL UNIQUE, color INTEGER NOT NULL,
     created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS chat_labels (
     label_id TEXT NOT NULL, jid TEXT NOT NULL, PRIMARY KEY (label_id, jid))`,
  "CREATE INDEX IF NOT EXISTS chat_labels_by_jid ON chat_labels (jid)",
];

/** The reference's fixed palette: `color` is an index into it. */
export const LABEL_COLORS = [
  "#FF0000",
  "#FF7F00",
  "#FFFF00",
  "#00FF00",
  "#0000FF",
  "#4B0082",
  "#9400D3",
  "#FF1493",
  "#00CED1",
  "#32CD32",
  "#FFD700",
  "#FF69B4",
  "#8B4513",
  "#2F4F4F",
  "#696969",
  "#708090",
  "#778899",
  "#B0C4DE",
  "#ADD8E6",
  "#F0E68C",
] as const;

type LabelRow = {
  id: string;
  name: string;
  color: number;
  created_at: number;
  updated_at: number;
  chat_count: number;
};

export interface LabelResource {
  id: string;
  name: string;
  color: number;
  colorHex: string;
  /** The spec's field for WhatsApp's predefined labels; not kept yet, so always null. */
  predefinedId: null;
  createdAt: string;
  updatedAt: string;
  chatCount: number;
}

const toResource = (row: LabelRow): LabelResource => ({
  id: row.id,
  name: row.name,
  color: row.color,
  colorHex: LABEL_COLORS[row.color] ?? LABEL_COLORS[0],
  predefinedId: null,
  createdAt: new Date(row.created_at).toISOString(),
  updatedAt: new Date(row.updated_at).toISOString(),
  chatCount: row.chat_count,
});

const SELECT_LABELS = `SELECT l.id, l.name, l.color, l.created_at, l.updated_at,
  (SELECT COUNT(*) FROM chat_labels c WHERE c.label_id = l.id) AS chat_count FROM labels l`;
const ORDER = "ORDER BY l.name COLLATE NOCASE, l.id";

export function findLabel(sql: SqlStorage, id: string): LabelResource | null {
  const row = sql.exec<LabelRow>(`${SELECT_LABELS} WHERE l.id = ?`, id).toArray()[0];
  return row ? toResource(row) : null;
}

export function labelsOfChat(sql: SqlStorage, jid: string): LabelResource[] {
  return sql
    .exec<LabelRow>(
      `${SELECT_LABELS} WHERE l.id IN (SELECT label_id FROM chat_labels WHERE jid = ?) ${ORDER}`,
      jid,
    )
    .toArray()
    .map(toResource);
}

export const nameKey = (name: string) => name.toLowerCase();

export function nameTaken(sql: SqlStorage, name: string, exceptId: string | null): boolean {
  return (
    sql
      .exec<{ id: string }>(
        "SELECT id FROM labels WHERE name_key = ? AND id IS NOT ?",
        nameKey(name),
        exceptId,
      )
      .toArray().length > 0
  );
}

/** WhatsApp numbers labels; a new one takes the next number after every label the session knows. */
function nextLabelId(sql: SqlStorage): string {
  const [row] = sql
    .exec<{ top: number | null }>("SELECT MAX(CAST(id AS INTEGER)) AS top FROM labels WHERE id GLOB '[0-9]*'")
    .toArray();
  return String((row?.top ?? 0) + 1);
}

/** Stores a label under its id, whether or not it is known yet (WhatsApp's echo may come first). */
export function putLabel(
  sql: SqlStorage,
  label: { id: string; name: string; color: number },
  now: number,
): void {
  sql.exec(
    `INSERT INTO labels (id, name, name_key, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_key = excluded.name_key,
       color = excluded.color, updated_at = excluded.updated_at`,
    label.id,
    label.name,
    nameKey(label.name),
    label.color,
    now,
    now,
  );
}

/** The change on the account first, while WhatsApp is connected; without a connection it stays here. */
async function onWhatsApp(ctx: SessionContext, ...operations: Array<() => Promise<Outcome<unknown>>>) {
  if (!ctx.isConnected()) return success(null);
  for (const operation of operations) {
    const result = await operation();
    if (!result.ok) return result;
  }
  return success(null);
}

const editLabel = (ctx: SessionContext, label: WaLabel) => () => ctx.wa({ op: "label.edit", label });

const duplicateName = (name: string) =>
  failure(409, `A label named "${name}" already exists in this session`);
const labelNotFound = () => failure(404, "Label not found");

export const labelsApi = {
  "label.list": (ctx: SessionContext, _input: Record<string, never>): Outcome<{ labels: LabelResource[] }> =>
    success({ labels: ctx.sql.exec<LabelRow>(`${SELECT_LABELS} ${ORDER}`).toArray().map(toResource) }),

  "label.create": async (
    ctx: SessionContext,
    input: { name: string; color?: number },
  ): Promise<Outcome<{ label: LabelResource }>> => {
    if (nameTaken(ctx.sql, input.name, null)) return duplicateName(input.name);
    const id = nextLabelId(ctx.sql);
    const color = input.color ?? 0;
    // Stored first so the id stays taken while WhatsApp is asked; taken back if WhatsApp refuses.
    putLabel(ctx.sql, { id, name: input.name, color }, ctx.now());
    const pushed = await onWhatsApp(ctx, editLabel(ctx, { id, name: input.name, color, deleted: false }));
    if (!pushed.ok) {
      ctx.sql.exec("DELETE FROM labels WHERE id = ?", id);
      return pushed;
    }
    const label = findLabel(ctx.sql, id);
    return label ? success({ label }) : labelNotFound();
  },

  "label.update": async (
    ctx: SessionContext,
    input: { labelId: string; name?: string; color?: number },
  ): Promise<Outcome<{ label: LabelResource }>> => {
    const before = findLabel(ctx.sql, input.labelId);
    if (!before) return labelNotFound();
    if (input.name !== undefined && nameTaken(ctx.sql, input.name, input.labelId))
      return duplicateName(input.name);
    const edited = { id: input.labelId, name: input.name ?? before.name, color: input.color ?? before.color };
    const pushed = await onWhatsApp(ctx, editLabel(ctx, { ...edited, deleted: false }));
    if (!pushed.ok) return pushed;
    putLabel(ctx.sql, edited, ctx.now());
    const label = findLabel(ctx.sql, input.labelId);
    return label ? success({ label }) : labelNotFound();
  },

  "label.delete": async (
    ctx: SessionContext,
    input: { labelId: string },
  ): Promise<Outcome<{ id: string }>> => {
    const label = findLabel(ctx.sql, input.labelId);
    if (!label) return labelNotFound();
    const gone = { id: label.id, name: label.name, color: label.color, deleted: true };
    const pushed = await onWhatsApp(ctx, editLabel(ctx, gone));
    if (!pushed.ok) return pushed;
    ctx.sql.exec("DELETE FROM labels WHERE id = ?", input.labelId);
    ctx.sql.exec("DELETE FROM chat_labels WHERE label_id = ?", input.labelId);
    return success({ id: input.labelId });
  },

  "label.chat.list": (ctx: SessionContext, input: { jid: string }): Outcome<{ labels: LabelResource[] }> =>
    success({ labels: labelsOfChat(ctx.sql, input.jid) }),

  /** All or nothing: one unknown label id and no assignment changes. */
  "label.chat.set": async (
    ctx: SessionContext,
    input: { jid: string; labelIds: string[]; action: "add" | "remove" },
  ): Promise<Outcome<{ labels: LabelResource[] }>> => {
    const missing = input.labelIds.filter((id) => !findLabel(ctx.sql, id));
    if (missing.length > 0) return failure(404, `Label not found: ${missing.join(", ")}`);
    const labeled = input.action === "add";
    const pushed = await onWhatsApp(
      ctx,
      ...input.labelIds.map(
        (labelId) => () => ctx.wa({ op: "label.chat", chat: input.jid, labelId, labeled }),
      ),
    );
    if (!pushed.ok) return pushed;
    for (const id of input.labelIds) {
      if (input.action === "add") {
        ctx.sql.exec("INSERT OR IGNORE INTO chat_labels (label_id, jid) VALUES (?, ?)", id, input.jid);
      } else {
        ctx.sql.exec("DELETE FROM chat_labels WHERE label_id = ? AND jid = ?", id, input.jid);
      }
    }
    return success({ labels: labelsOfChat(ctx.sql, input.jid) });
  },

  "label.chats": (
    ctx: SessionContext,
    input: { labelId: string },
  ): Outcome<{ label: LabelResource; chats: string[]; count: number }> => {
    const label = findLabel(ctx.sql, input.labelId);
    if (!label) return labelNotFound();
    const chats = ctx.sql
      .exec<{ jid: string }>("SELECT jid FROM chat_labels WHERE label_id = ? ORDER BY jid", input.labelId)
      .toArray()
      .map((row) => row.jid);
    return success({ label, chats, count: chats.length });
  },
};
