import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { loadConfig, toWebSocketUrl } from "../../bridge/src/config.ts";
import { backoffDelay, LINK_BACKOFF } from "../../bridge/src/shared/backoff.ts";
import { jsonLog, type LogLevel, type LogLevelSetting } from "../../bridge/src/shared/log.ts";

describe("backoff", () => {
  it("is full jitter under an exponential ceiling capped at 10 s", () => {
    expect(backoffDelay(0, LINK_BACKOFF, () => 0.999)).toBe(249);
    expect(backoffDelay(3, LINK_BACKOFF, () => 0.5)).toBe(1000);
    expect(backoffDelay(30, LINK_BACKOFF, () => 0.999)).toBe(9990);
    expect(backoffDelay(5, LINK_BACKOFF, () => 0)).toBe(0);
  });
});

describe("config", () => {
  const base = { EDGE_URL: "http://127.0.0.1:8787/", BRIDGE_TOKEN: "secret-token" };

  it("turns an http edge into ws and applies defaults", () => {
    const config = loadConfig(base);
    expect(config.edgeUrl).toBe("ws://127.0.0.1:8787");
    expect(config.capacity).toBe(1000);
    expect(config.simulator).toBe(false);
    expect(config.bridgeId).toBe(`${hostname()}-${process.pid}`);
  });

  it("keeps ws(s), converts https, reads capacity, id and SIMULATOR; runs no agents", () => {
    expect(toWebSocketUrl("https://edge.example.com/prefix/")).toBe("wss://edge.example.com/prefix");
    const config = loadConfig({
      ...base,
      EDGE_URL: "wss://edge.example.com",
      BRIDGE_ID: "b1",
      BRIDGE_CAPACITY: "5",
      SIMULATOR: "1",
    });
    expect(config).toEqual({
      edgeUrl: "wss://edge.example.com",
      token: "secret-token",
      bridgeId: "b1",
      capacity: 5,
      simulator: true,
      history: { days: 30, messagesPerChat: 100 },
      logLevel: "warn",
      waVersionUrl: "https://web.whatsapp.com/sw.js",
    });
    // Where the current WhatsApp Web version is read: WhatsApp Web by default, another URL, or never.
    expect(loadConfig({ ...base, WA_VERSION_URL: "http://127.0.0.1:9/sw.js" }).waVersionUrl).toBe(
      "http://127.0.0.1:9/sw.js",
    );
    expect(loadConfig({ ...base, WA_VERSION_URL: "off" }).waVersionUrl).toBeNull();
    expect(() => loadConfig({ ...base, WA_VERSION_URL: "ftp://x" })).toThrow(/WA_VERSION_URL must be/);
    expect(loadConfig({ ...base, WA_HISTORY_DAYS: "0", WA_HISTORY_MESSAGES: "20" }).history).toEqual({
      days: 0,
      messagesPerChat: 20,
    });
    expect(() => loadConfig({ ...base, WA_HISTORY_DAYS: "-1" })).toThrow();
    expect(loadConfig({ ...base, SIMULATOR_QR_INTERVAL_MS: "1500" }).simulatorQrIntervalMs).toBe(1500);
    expect(loadConfig(base).simulatorQrIntervalMs).toBeUndefined();
    expect(loadConfig({ ...base, WA_WEBSOCKET_URL: "ws://127.0.0.1:9/ws/chat" }).waWebSocketUrl).toBe(
      "ws://127.0.0.1:9/ws/chat",
    );
    expect(loadConfig(base).waWebSocketUrl).toBeUndefined();
    expect(() => loadConfig({ ...base, WA_WEBSOCKET_URL: "https://web.whatsapp.com" })).toThrow(
      /WA_WEBSOCKET_URL must be a ws or wss URL/,
    );
    expect(loadConfig({ ...base, WA_VERSION: "2.3000.1043857760" }).waVersion).toEqual([2, 3000, 1043857760]);
    expect(loadConfig(base).waVersion).toBeUndefined();
    expect(() => loadConfig({ ...base, WA_VERSION: "latest" })).toThrow(/WA_VERSION must look like/);
    expect(() => loadConfig({ ...base, SIMULATOR_QR_INTERVAL_MS: "5" })).toThrow(
      /invalid bridge configuration/,
    );
  });

  it("takes another certificate root only together with another WhatsApp endpoint", () => {
    const root = "ab".repeat(32);
    const fake = { ...base, WA_WEBSOCKET_URL: "ws://127.0.0.1:9/ws/chat" };
    expect(loadConfig({ ...fake, WA_CERT_ROOT_KEY: root }).waRootKey).toEqual(Buffer.from(root, "hex"));
    expect(loadConfig(fake).waRootKey).toBeUndefined();
    // Against WhatsApp itself the pinned root cannot be swapped by one variable.
    expect(() => loadConfig({ ...base, WA_CERT_ROOT_KEY: root })).toThrow(/only with WA_WEBSOCKET_URL/);
    expect(() => loadConfig({ ...fake, WA_CERT_ROOT_KEY: "abcd" })).toThrow(/64 hex digits/);
  });

  it("sends downloads for WhatsApp's media host elsewhere only together with another WhatsApp endpoint", () => {
    const fake = { ...base, WA_WEBSOCKET_URL: "ws://127.0.0.1:9/ws/chat" };
    expect(loadConfig({ ...fake, WA_MEDIA_HOST: "127.0.0.1:8443" }).waMediaHost).toBe("127.0.0.1:8443");
    expect(loadConfig(fake).waMediaHost).toBeUndefined();
    expect(() => loadConfig({ ...base, WA_MEDIA_HOST: "127.0.0.1:8443" })).toThrow(
      /only with WA_WEBSOCKET_URL/,
    );
    expect(() => loadConfig({ ...fake, WA_MEDIA_HOST: "https://x/y" })).toThrow(
      /WA_MEDIA_HOST must be a host/,
    );
  });

  it("refuses a missing token, a bad URL and a bad capacity without echoing the token", () => {
    expect(() => loadConfig({ EDGE_URL: "http://x" })).toThrow(/BRIDGE_TOKEN is required/);
    expect(() => loadConfig({ ...base, EDGE_URL: "ftp://x" })).toThrow(/EDGE_URL/);
    expect(() => loadConfig({ BRIDGE_TOKEN: "secret-token" })).toThrow(/EDGE_URL is required/);
    expect(() => loadConfig({ ...base, BRIDGE_CAPACITY: "0" })).toThrow(/invalid bridge configuration/);
    try {
      loadConfig({ ...base, EDGE_URL: "nope" });
    } catch (error) {
      expect(String(error)).not.toContain("secret-token");
    }
  });
});

describe("log level", () => {
  const LEVELS: LogLevel[] = ["debug", "info", "warn", "error"];
  /** The levels of the lines a log at `setting` writes when each level logs once. */
  const written = (setting?: LogLevelSetting) => {
    const lines: string[] = [];
    const log = jsonLog({ ...(setting ? { level: setting } : {}), write: (line) => lines.push(line) });
    for (const level of LEVELS) log(level, `a ${level} line`);
    return lines.map((line) => (JSON.parse(line) as { level: string }).level);
  };

  it("writes warnings and errors by default, more or less as LOG_LEVEL says (the stack's names)", () => {
    expect(written()).toEqual(["warn", "error"]);
    expect(written("info")).toEqual(["info", "warn", "error"]);
    expect(written("log")).toEqual(["info", "warn", "error"]);
    expect(written("debug")).toEqual(LEVELS);
    expect(written("error")).toEqual(["error"]);
    expect(written("none")).toEqual([]);
  });

  it("is read from LOG_LEVEL (default warn); an unknown one is refused by name", () => {
    const base = { EDGE_URL: "http://127.0.0.1:8787/", BRIDGE_TOKEN: "secret-token" };
    expect(loadConfig(base).logLevel).toBe("warn");
    expect(loadConfig({ ...base, LOG_LEVEL: "debug" }).logLevel).toBe("debug");
    expect(() => loadConfig({ ...base, LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL must be one of/);
  });
});
