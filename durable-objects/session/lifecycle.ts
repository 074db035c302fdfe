import type { LifecycleEvent } from "../../bridge/src/protocol/link";
import type { SessionState, SessionStatus } from "../../workers/db/schema";
import type { SessionRecord } from "./storage";

/**
 * The session lifecycle as pure functions: which record changes each bridge event causes. The
 * transitions are documented in docs/sessions.md; the tests drive every one of them.
 */

export function statusOf(state: SessionState): SessionStatus {
  if (state === "connected") return "Connected";
  if (state === "starting" || state === "scan_qr" || state === "reconnecting") return "Connecting";
  return "Disconnected";
}

/** States in which nothing runs and nothing will until someone calls start. */
export const RESTING_STATES: ReadonlySet<SessionState> = new Set(["stopped", "logged_out", "failed"]);

/** States on the way to a QR (or straight to connected): a `GET …/qr` waits in them, then answers 202. */
export const QR_COMING_STATES: ReadonlySet<SessionState> = new Set(["starting", "reconnecting"]);

export function applyEvent(
  record: SessionRecord,
  event: LifecycleEvent,
  now: number,
): Partial<SessionRecord> {
  switch (event.kind) {
    case "qr":
      return { state: "scan_qr", qr: event.qr, qrImage: event.image };
    case "connecting":
      // Each retry after a network error starts with "connecting"; the state stays network_error until
      // WhatsApp answers (a QR, connected, or a close of its own), so one outage is one state change.
      if (record.state === "network_error") return {};
      return {
        state: record.state === "connected" || record.state === "reconnecting" ? "reconnecting" : "starting",
      };
    case "connected":
      return {
        state: "connected",
        me: event.me,
        connectedAt: record.state === "connected" && record.connectedAt ? record.connectedAt : now,
        qr: null,
        qrImage: null,
        lastDisconnect: null,
      };
    case "me":
      return { me: event.me };
    case "disconnected": {
      const resting = RESTING_STATES.has(event.next);
      return {
        state: event.next,
        qr: null,
        qrImage: null,
        connectedAt: null,
        lastDisconnect: `${event.code} ${event.reason}`.trim(),
        ...(resting ? { desired: "stopped" as const } : {}),
        ...(event.next === "logged_out" ? { me: null } : {}),
      };
    }
    case "auth":
      return {};
  }
}
