import type { NetworkEvent } from "../../../bridge/src/protocol/messaging";
import type { SessionContext } from "../context";
import { findLabel, LABEL_COLORS, nameTaken, putLabel } from "./store";

/**
 * Label changes from WhatsApp's app state (made on the phone, or this session's own echoed back):
 * stored under WhatsApp's id and announced as `label.update` and `label.association`.
 */

type LabelEdit = Extract<NetworkEvent, { kind: "label.edit" }>;
type LabelAssociation = Extract<NetworkEvent, { kind: "label.association" }>;

export function applyLabelEdit(ctx: SessionContext, { label }: LabelEdit): void {
  const colorHex = LABEL_COLORS[label.color] ?? LABEL_COLORS[0];
  if (label.deleted) {
    if (!findLabel(ctx.sql, label.id)) return;
    ctx.sql.exec("DELETE FROM labels WHERE id = ?", label.id);
    ctx.sql.exec("DELETE FROM chat_labels WHERE label_id = ?", label.id);
    ctx.emit("label.update", { id: label.id, name: label.name, color: label.color, colorHex, deleted: true });
    return;
  }
  // Names are unique here but not on WhatsApp: a clash (a label made here while offline) keeps both.
  const name = nameTaken(ctx.sql, label.name, label.id) ? `${label.name} (${label.id})` : label.name;
  putLabel(ctx.sql, { id: label.id, name, color: label.color }, ctx.now());
  ctx.emit("label.update", { id: label.id, name, color: label.color, colorHex, deleted: false });
}

/** Kept even for a label not known yet: its edit may come later in the same sync. */
export function applyLabelAssociation(ctx: SessionContext, event: LabelAssociation): void {
  if (event.labeled) {
    ctx.sql.exec(
      "INSERT OR IGNORE INTO chat_labels (label_id, jid) VALUES (?, ?)",
      event.labelId,
      event.chat,
    );
  } else {
    ctx.sql.exec("DELETE FROM chat_labels WHERE label_id = ? AND jid = ?", event.labelId, event.chat);
  }
  ctx.emit("label.association", {
    labelId: event.labelId,
    jid: event.chat,
    action: event.labeled ? "add" : "remove",
  });
}
