// What the local stack logs by default: warnings and errors, never a line per request (each one costs
// workerd a loopback call to Node). Request lines are opt-in (LOG_REQUESTS=1, or LOG_LEVEL info/debug).
// LOG_LEVEL reaches every process: the bridge and the runner print their info lines only when asked
// (that the default hides them is asserted on the fresh stack of start.test.ts).
import { stripVTControlCharacters } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { logSettings } from "../../scripts/log-settings.mjs";
import { type Stack, startStack } from "../support/stack.ts";

const stacks: Stack[] = [];

afterAll(async () => {
  for (const stack of stacks) await stack.stop().catch(() => undefined);
});

/** A stack with nothing of its own running (no bridge, runner or cron), so every line is ours. */
const quietStack = (env: Record<string, string>) =>
  startStack({ logLevel: null, env: { BRIDGE: "0", RUNNER: "0", CRON: "0", ...env } });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const REQUEST_LINE = /GET \/api\/health 200/;
/** Miniflare colours the method and status of a request line. */
const plain = (text: string) => stripVTControlCharacters(text);

async function getHealth(baseUrl: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const response = await fetch(`${baseUrl}/api/health`);
    expect(response.status).toBe(200);
    await response.body?.cancel();
  }
}

describe("log settings", () => {
  it("logs warnings and errors by default; request lines only when asked for", () => {
    expect(logSettings({})).toEqual({ level: "warn", requests: false });
    expect(logSettings({ LOG_LEVEL: "error" })).toEqual({ level: "error", requests: false });
    expect(logSettings({ LOG_LEVEL: "info" })).toEqual({ level: "info", requests: true });
    expect(logSettings({ LOG_LEVEL: "debug" })).toEqual({ level: "debug", requests: true });
    expect(logSettings({ LOG_REQUESTS: "1" })).toEqual({ level: "info", requests: true });
    expect(logSettings({ LOG_REQUESTS: "1", LOG_LEVEL: "warn" })).toEqual({ level: "info", requests: true });
    expect(logSettings({ LOG_REQUESTS: "1", LOG_LEVEL: "debug" })).toEqual({
      level: "debug",
      requests: true,
    });
    expect(logSettings({ LOG_REQUESTS: "0" })).toEqual({ level: "warn", requests: false });
    expect(() => logSettings({ LOG_LEVEL: "verbose" })).toThrow(/LOG_LEVEL must be one of/);
  });

  it("at default settings a successful request writes no log line; LOG_REQUESTS=1 writes one", async () => {
    const [quiet, verbose] = await Promise.all([quietStack({}), quietStack({ LOG_REQUESTS: "1" })]);
    stacks.push(quiet, verbose);
    await getHealth(quiet.baseUrl, 5);
    await getHealth(verbose.baseUrl, 5);
    // The opted-in stack proves the lines reach this output; both had the same time to arrive.
    await expect.poll(() => plain(verbose.output()), { timeout: 20_000 }).toMatch(REQUEST_LINE);
    await sleep(200);
    expect(plain(quiet.output())).not.toMatch(REQUEST_LINE);
  });

  it("LOG_LEVEL=info reaches the bridge and the runner: their info lines are printed", async () => {
    const chatty = await startStack({ logLevel: "info", env: { CRON: "0" } });
    stacks.push(chatty);
    const jsonLines = () =>
      plain(chatty.output())
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { level: string; msg: string });
    await expect
      .poll(
        () =>
          jsonLines()
            .filter((line) => line.level === "info")
            .map((line) => line.msg),
        {
          timeout: 30_000,
        },
      )
      .toEqual(expect.arrayContaining(["bridge starting", "fleet link open", "runner link open"]));
  });
});
