import type { Outcome } from "../../../durable-objects/messaging/context";
import { ApiError, titleOf } from "../../http/errors";

/** Turns a SessionDO outcome into data, or the matching error (503 reads "Session not ready"). */
export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.data;
  const message = outcome.status === 503 ? "Session not ready" : titleOf(outcome.status);
  throw new ApiError(outcome.status, message, outcome.error);
}
