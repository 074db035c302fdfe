import { readLimits } from "../messaging/limits/store";
import { counts } from "../messaging/messages/store";
import type { SessionSnapshot } from "./contract";
import { statusOf } from "./lifecycle";
import type { SessionRecord } from "./storage";

/** What the Worker sees of a session: its record, with what only the object itself can tell. */
export function snapshotOf(
  record: SessionRecord,
  sql: SqlStorage,
  live: { proxy: string | null; hasInstance: boolean },
): SessionSnapshot {
  return {
    state: record.state,
    status: statusOf(record.state),
    qr: record.qr,
    qrImage: record.qrImage,
    me: record.me,
    connectedAt: record.connectedAt,
    lastDisconnect: record.lastDisconnect,
    waVersion: record.waVersion,
    proxy: live.proxy,
    hasInstance: live.hasInstance,
    epoch: record.leaseEpoch,
    counts: counts(sql),
    limits: readLimits(sql),
  };
}
