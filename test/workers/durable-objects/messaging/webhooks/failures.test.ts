// Why a delivery got no answer, as the deliveries log and the test delivery say it: DNS, connect
// (refused or reset), TLS or timeout, never workerd's bare `internal error; reference = …`. The
// unresolvable name and the refused port are real (workerd's own fetch from the SessionDO); the TLS
// failure and the timeout need a listening receiver, which workerd tests cannot run, so they are
// proved on a real receiver in test/e2e/webhooks-delivery.test.ts and here on the reasoning over the
// exact rejections workerd gives (recorded from workerd for each case, docs/decisions.md).
import { describe, expect, it } from "vitest";
import {
  failureReason,
  needsProbe,
  probeReachability,
} from "../../../../../durable-objects/messaging/webhooks/failure";
import { createWebhook, ownerWithSession } from "../../../gateway/webhooks/helpers";
import { asKey, call } from "../../../helpers";
import { connected, endpoint, incoming, log, until } from "./fake-receivers";

const DNS = "http://nonexistent.invalid/hook";
/** Nothing listens on port 1. */
const REFUSED = "http://127.0.0.1:1/hook";

/** What workerd's fetch rejects with: an Error with only a message (and `remote`, `retryable`). */
const workerd = (message: string) => Object.assign(new Error(message), { remote: true });
const OPAQUE = workerd("internal error; reference = qlc2np8d08gocu9449sneoi3");
const LOST = workerd("Network connection lost.");
const timeout = () => new DOMException("The operation was aborted due to timeout", "TimeoutError");
const target = (url: string) => ({ url, timeoutMs: 15_000 });

describe("the reason of a delivery that got no answer", () => {
  it("names DNS and a refused connection in the deliveries log, for real", async () => {
    const dns = endpoint("dns", ["message.received"], { url: DNS });
    const refused = endpoint("refused", ["message.received"], { url: REFUSED });
    const s = await connected([dns, refused]);
    await incoming(s, "N-1");
    await until(s, async () => ((await log(s, "dns"))[0]?.attempts ?? 0) >= 1);
    await until(s, async () => ((await log(s, "refused"))[0]?.attempts ?? 0) >= 1);
    expect((await log(s, "dns"))[0]).toMatchObject({
      status: "pending",
      statusCode: null,
      error:
        "DNS lookup failed: nonexistent.invalid could not be resolved (check the webhook URL's host name)",
    });
    expect((await log(s, "refused"))[0]?.error).toBe(
      "connection refused: nothing accepts connections on 127.0.0.1:1 (is the receiver running?)",
    );
  });

  it("says the same in a test delivery's answer", async () => {
    const { alice, session } = await ownerWithSession();
    const messageFor = async (url: string) => {
      const { id } = await createWebhook(alice.key, session, { url });
      const res = await call<{ ok: boolean; message: string; data: { error: string | null } }>(
        "POST",
        `/api/webhooks/${session.sessionId}/${id}/test`,
        { headers: asKey(alice.key) },
      );
      expect(res.body.ok).toBe(false);
      return res.body.message;
    };
    expect(await messageFor(DNS)).toBe(
      "Test delivery failed: DNS lookup failed: nonexistent.invalid could not be resolved (check the webhook URL's host name)",
    );
    expect(await messageFor(REFUSED)).toBe(
      "Test delivery failed: connection refused: nothing accepts connections on 127.0.0.1:1 (is the receiver running?)",
    );
  });

  it("the probe: a TCP connection to an unresolvable name or a closed port fails", async () => {
    expect(await probeReachability(DNS)).toBe("fails");
    expect(await probeReachability(REFUSED)).toBe("fails");
  });

  it("reads workerd's rejections, with the probe where the message alone cannot tell", () => {
    expect(needsProbe(OPAQUE)).toBe(true);
    expect(needsProbe(LOST)).toBe(true);
    expect(needsProbe(timeout())).toBe(false);
    expect(failureReason(timeout(), target("https://hooks.example.com/x"), null)).toBe(
      "timeout: hooks.example.com:443 sent no answer within 15 s",
    );
    // An opaque error whose host and port take a plain TCP connection: TLS, over https.
    expect(failureReason(OPAQUE, target("https://127.0.0.1:8080/x"), "opens")).toBe(
      "TLS handshake failed with 127.0.0.1:8080: an untrusted or expired certificate, or the port does not speak HTTPS",
    );
    expect(failureReason(OPAQUE, target("https://hooks.example.com/x"), "fails")).toMatch(
      /^DNS lookup failed: hooks\.example\.com could not be resolved/,
    );
    expect(failureReason(LOST, target("http://hooks.example.com:8080/x"), "opens")).toBe(
      "connection reset: hooks.example.com:8080 closed the connection before answering",
    );
    // The probe could not say: both causes are named, and that workerd gave no reason.
    expect(failureReason(OPAQUE, target("https://hooks.example.com/x"), null)).toBe(
      "could not reach hooks.example.com:443: DNS lookup, connection or TLS handshake failed " +
        "(workerd gave no reason: internal error; reference = qlc2np8d08gocu9449sneoi3)",
    );
    expect(failureReason(LOST, target("http://[::1]:9/x"), null)).toBe(
      "connection failed: ::1:9 refused the connection or closed it before answering",
    );
  });

  it("keeps other runtimes' words under the cause they name", () => {
    const node = Object.assign(new TypeError("fetch failed: getaddrinfo ENOTFOUND nope.example"), {});
    expect(failureReason(node, target("https://nope.example/x"), null)).toBe(
      "DNS lookup failed for nope.example: fetch failed: getaddrinfo ENOTFOUND nope.example",
    );
    expect(failureReason(new Error("certificate has expired"), target("https://a.example/x"), null)).toBe(
      "TLS handshake failed with a.example:443: certificate has expired",
    );
    expect(failureReason(new Error("something odd"), target("https://a.example/x"), null)).toBe(
      "request failed: something odd",
    );
  });
});
