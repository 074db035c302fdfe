import { describe, expect, it } from "vitest";
import type { CloseInfo } from "../../../bridge/src/protocol/seam.ts";
import { decideReconnect } from "../../../bridge/src/sessions/reconnect-policy.ts";

const close = (code: number, extra: Partial<CloseInfo> = {}): CloseInfo => ({
  code,
  reason: "from whatsapp",
  qrExpired: false,
  loggedOut: false,
  ...extra,
});
const fresh = { badSessionRetries: 0 };

describe("reconnect policy (messaging-gateway.md §4.6)", () => {
  it("515 restart required: reconnect at once, not a failure", () => {
    expect(decideReconnect(close(515), fresh)).toEqual({
      next: "reconnecting",
      delay: "immediate",
      reason: "restart required",
    });
  });

  it.each([428, 408, 503])("%i: reconnect with backoff and keep trying", (code) => {
    const decision = decideReconnect(close(code), fresh);
    expect(decision).toMatchObject({ next: "reconnecting", delay: "backoff" });
  });

  it("408 once the QRs ran out: stop with 'QR expired'", () => {
    expect(decideReconnect(close(408, { qrExpired: true }), fresh)).toEqual({
      next: "stopped",
      reason: "QR expired",
    });
  });

  it("440 connection replaced: failed, never reconnect", () => {
    expect(decideReconnect(close(440), fresh).next).toBe("failed");
  });

  it("401 logged out: logged_out (creds cleared)", () => {
    expect(decideReconnect(close(401), fresh).next).toBe("logged_out");
    // The seam's loggedOut flag alone is enough, whatever the code.
    expect(decideReconnect(close(428, { loggedOut: true }), fresh).next).toBe("logged_out");
  });

  it.each([403, 402, 406])("%i blocked or restricted: failed", (code) => {
    expect(decideReconnect(close(code), fresh).next).toBe("failed");
  });

  it("500 bad session: one immediate retry, then logged_out (pair again)", () => {
    expect(decideReconnect(close(500), { badSessionRetries: 0 })).toMatchObject({
      next: "reconnecting",
      delay: "immediate",
    });
    expect(decideReconnect(close(500), { badSessionRetries: 1 }).next).toBe("logged_out");
  });

  it("411 multi-device mismatch: logged_out (pair again)", () => {
    expect(decideReconnect(close(411), fresh).next).toBe("logged_out");
  });

  it.each([0, 419, 1006, 4999])("unknown code %i: backoff", (code) => {
    expect(decideReconnect(close(code), fresh)).toMatchObject({ next: "reconnecting", delay: "backoff" });
  });
});
