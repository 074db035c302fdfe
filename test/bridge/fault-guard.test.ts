/**
 * The fault guard's pieces (bridge/src/shared/fault-guard.ts): what it may print about a fault, and
 * which session a fault belongs to. The process-level behaviour (a real bridge that stays up) is in
 * main.test.ts.
 */
import { describe, expect, it } from "vitest";
import {
  asSession,
  currentSession,
  describeFault,
  installFaultGuard,
} from "../../bridge/src/shared/fault-guard.ts";

describe("fault guard", () => {
  it("prints an Error's name and message with secrets masked, and nothing of other values", () => {
    expect(describeFault(new TypeError("bad token abc123 at wss://edge?token=abc123"), ["abc123"])).toEqual({
      type: "TypeError",
      error: "bad token [redacted] at wss://edge?token=[redacted]",
    });
    // A rejected value may be a frame or an auth state: only its type is told.
    expect(describeFault({ creds: { noiseKey: "private" } })).toEqual({
      type: "object",
      error: "a non-Error value (not printed)",
    });
    expect(describeFault("key material")).toEqual({
      type: "string",
      error: "a non-Error value (not printed)",
    });
    expect(describeFault(new Error("x".repeat(2_000))).error).toHaveLength(512);
  });

  it("names the session whose work is running, across timers and awaits, and none outside", async () => {
    const seen: Array<string | null> = [];
    await Promise.all([
      asSession("s1", async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        seen.push(currentSession());
      }),
      asSession("s2", async () => {
        await Promise.resolve();
        seen.push(currentSession());
      }),
    ]);
    expect(seen.sort()).toEqual(["s1", "s2"]);
    expect(currentSession()).toBeNull();
  });

  it("a log pipe gone (EPIPE) is not a fault to log: logging it would fail again, forever", () => {
    const logged: string[] = [];
    const remove = installFaultGuard({ log: (_level, message) => logged.push(message), secrets: [] });
    try {
      const epipe = Object.assign(new Error("write EPIPE"), { code: "EPIPE" });
      // Unhandled, an 'error' event throws (and becomes the uncaught exception the guard would log).
      expect(() => process.stdout.emit("error", epipe)).not.toThrow();
      expect(() => process.stderr.emit("error", epipe)).not.toThrow();
      expect(logged).toEqual([]);
    } finally {
      remove();
    }
  });
});
