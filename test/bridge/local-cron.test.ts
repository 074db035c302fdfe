// The cron trigger of `npm start` and `npm run serve` (scripts/local-cron.mjs): the Worker's scheduled
// handler at each whole minute, with that minute as its scheduled time, as Cloudflare fires it. Only
// the clock is set (to just before a minute); the timer, the HTTP request and the server are real.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { nextMinute, startLocalCron } from "../../scripts/local-cron.mjs";

const MINUTE = 60_000;
const AT = Date.parse("2030-05-17T12:34:00.000Z");

describe("nextMinute", () => {
  it("is the whole minute after now, never now itself", () => {
    expect(nextMinute(AT - 1)).toBe(AT);
    expect(nextMinute(AT - MINUTE + 1)).toBe(AT);
    expect(nextMinute(AT)).toBe(AT + MINUTE);
    expect(nextMinute(AT + 1)).toBe(AT + MINUTE);
  });
});

describe("startLocalCron", () => {
  let server: Server | undefined;
  let stop: (() => void) | undefined;

  afterEach(async () => {
    stop?.();
    vi.useRealTimers();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  });

  /**
   * The cron started 400 ms before a whole minute (by the clock; the timer is real) against a stand-in
   * Worker answering `status`, which records each request and when it arrived.
   */
  async function cronBeforeMinute(status: number) {
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    vi.setSystemTime(AT - 400);
    const hits: Array<{ url: URL; at: number }> = [];
    server = createServer((request: IncomingMessage, response) => {
      hits.push({ url: new URL(request.url ?? "/", "http://worker"), at: Date.now() });
      response.writeHead(status).end();
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const logged: string[] = [];
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    stop = startLocalCron({ baseUrl, log: (message) => logged.push(message) }).stop;
    return { hits, logged };
  }

  it("calls the scheduled handler at the whole minute with that minute as its time", async () => {
    const { hits, logged } = await cronBeforeMinute(200);
    await vi.waitFor(() => expect(hits).toHaveLength(1), { timeout: 20_000 });
    const [hit] = hits;
    expect(hit?.url.pathname).toBe("/cdn-cgi/handler/scheduled");
    expect(hit?.url.searchParams.get("cron")).toBe("* * * * *");
    expect(hit?.url.searchParams.get("time")).toBe(String(AT));
    expect(hit?.at).toBeGreaterThanOrEqual(AT);
    expect(logged).toEqual([]);
  });

  it("logs a failing answer instead of throwing", async () => {
    const { hits, logged } = await cronBeforeMinute(500);
    await vi.waitFor(() => expect(logged).toEqual(["cron: the scheduled handler answered 500"]), {
      timeout: 20_000,
    });
    expect(hits).toHaveLength(1);
  });
});
