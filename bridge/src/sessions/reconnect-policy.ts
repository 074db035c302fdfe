/**
 * What to do when a WhatsApp socket closes: the `DisconnectReason` table of the reference
 * (messaging-gateway.md §4.6) as one pure function. The answer's `next` is the protocol's
 * `disconnected.next`, so the edge learns the session's fate from the same decision the bridge acts on.
 */
import type { CloseInfo } from "../protocol/seam.ts";

export type ReconnectDecision =
  | {
      /** `network_error`: WhatsApp was not reached at all; retried like any reconnect, reported as what it is. */
      next: "reconnecting" | "network_error";
      /** `immediate` for expected restarts; `backoff` (exponential, jittered) for trouble. */
      delay: "immediate" | "backoff";
      reason: string;
    }
  /** `logged_out` also means: clear the creds, a new QR is needed. */
  | { next: "stopped" | "logged_out" | "failed"; reason: string };

export interface PolicyContext {
  /** Immediate retries already spent on 500 (bad session) since the socket last opened. */
  badSessionRetries: number;
}

export function decideReconnect(close: CloseInfo, context: PolicyContext): ReconnectDecision {
  if (close.loggedOut) return { next: "logged_out", reason: "logged out" };
  // Whoever answered is not WhatsApp (or sits between us): retrying would only talk to it again.
  if (close.certificateRefused) {
    return {
      next: "failed",
      reason: `${close.reason}; not retried: the network path to WhatsApp may be intercepted`.slice(0, 512),
    };
  }
  // Before the QR check: with no network Baileys closes with the same 408 as "the QRs ran out".
  if (close.networkError)
    return { next: "network_error", delay: "backoff", reason: `WhatsApp unreachable: ${close.reason}` };
  switch (close.code) {
    case 515:
      // Normal right after pairing; treating it as fatal is the classic "couldn't link device" bug.
      return { next: "reconnecting", delay: "immediate", reason: "restart required" };
    case 428:
      return { next: "reconnecting", delay: "backoff", reason: "connection closed" };
    case 408:
      if (close.qrExpired) return { next: "stopped", reason: "QR expired" };
      return { next: "reconnecting", delay: "backoff", reason: "connection lost" };
    case 503:
      return { next: "reconnecting", delay: "backoff", reason: "WhatsApp unavailable" };
    case 440:
      // Another client holds these creds. Reconnecting would fight it in a loop and can corrupt the
      // session; the lease should have prevented this, so stop and let a human look.
      return { next: "failed", reason: "connection replaced by another client" };
    case 401:
      return { next: "logged_out", reason: "logged out" };
    case 405:
      // WhatsApp refuses the client version; retrying the same version loops forever.
      return {
        next: "failed",
        reason:
          "WhatsApp refused this client version (405), also after reading the current one: check the " +
          "bridge's WA_VERSION_URL (or pin WA_VERSION to a current version)",
      };
    case 403:
      return { next: "failed", reason: "forbidden: account blocked" };
    case 402:
    case 406:
      return { next: "failed", reason: `account restricted (${close.code})` };
    case 500:
      if (context.badSessionRetries < 1) {
        return { next: "reconnecting", delay: "immediate", reason: "bad session, retrying once" };
      }
      return { next: "logged_out", reason: "bad session: pair again" };
    case 411:
      return { next: "logged_out", reason: "multi-device mismatch: pair again" };
    default:
      return { next: "reconnecting", delay: "backoff", reason: close.reason || `closed (${close.code})` };
  }
}
