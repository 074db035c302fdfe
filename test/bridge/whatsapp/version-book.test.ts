// Which WhatsApp Web version a socket announces (bridge/src/whatsapp/version.ts), without a network:
// the sources' formats, the order pinned > fetched > the edge's last good > bundled, one fetch shared.
import { describe, expect, it } from "vitest";
import { parseVersionSource, VersionBook } from "../../../bridge/src/whatsapp/version.ts";

const bundled: [number, number, number] = [2, 3000, 100];

const answering = (body: string, status = 200) => {
  let calls = 0;
  const fetch = (async () => {
    calls++;
    return new Response(body, { status });
  }) as typeof globalThis.fetch;
  return { fetch, calls: () => calls };
};

describe("reading a version source", () => {
  it("reads WhatsApp Web's sw.js, Baileys' JSON, and a plain version; nothing else", () => {
    expect(parseVersionSource('x=JSON.parse("{\\"client_revision\\":1029384756,\\"y\\":1}")')).toEqual([
      2, 3000, 1029384756,
    ]);
    expect(parseVersionSource('{"version":[2,3000,555]}')).toEqual([2, 3000, 555]);
    expect(parseVersionSource('{"currentVersion":"2.3000.777"}')).toEqual([2, 3000, 777]);
    expect(parseVersionSource("2.3000.888\n")).toEqual([2, 3000, 888]);
    expect(parseVersionSource("<html>blocked</html>")).toBeNull();
    expect(parseVersionSource('{"version":[2,"3000",1]}')).toBeNull();
  });
});

describe("the version book", () => {
  it("pinned wins and is never fetched", async () => {
    const source = answering("2.3000.999");
    const book = new VersionBook({
      pinned: [2, 3000, 5],
      sourceUrl: "http://x",
      bundled,
      fetch: source.fetch,
    });
    expect(await book.refresh()).toBe(false);
    expect(book.forSession([2, 3000, 900])).toEqual({ version: [2, 3000, 5], source: "pinned" });
    expect(source.calls()).toBe(0);
  });

  it("a fetched version beats the edge's; unread, the edge's beats the bundled only when newer", async () => {
    const offline = new VersionBook({ sourceUrl: "http://x", bundled, fetch: answering("nope", 503).fetch });
    expect(await offline.refresh()).toBe(false);
    expect(offline.forSession([2, 3000, 150])).toEqual({ version: [2, 3000, 150], source: "edge" });
    expect(offline.forSession([2, 3000, 50])).toEqual({ version: bundled, source: "bundled" });
    expect(offline.forSession(null)).toEqual({ version: bundled, source: "bundled" });

    const online = new VersionBook({ sourceUrl: "http://x", bundled, fetch: answering("2.3000.200").fetch });
    expect(await online.refresh()).toBe(true);
    expect(online.forSession([2, 3000, 150])).toEqual({ version: [2, 3000, 200], source: "fetched" });
    expect(await online.refresh()).toBe(false);
  });

  it("a socket that announced an older version than the book's now differs from it", async () => {
    const book = new VersionBook({ sourceUrl: "http://x", bundled, fetch: answering("2.3000.400").fetch });
    expect(book.differsFrom(bundled)).toBe(false);
    await book.refresh();
    // A second session refused after the first already read the new version: still worth one try.
    expect(book.differsFrom(bundled)).toBe(true);
    expect(book.differsFrom([2, 3000, 400])).toBe(false);
  });

  it("an unreadable source at start is an info line (an offline start stays quiet); after a 405, a warning", async () => {
    const levels: string[] = [];
    const log = (level: string) => {
      levels.push(level);
    };
    const book = new VersionBook({ sourceUrl: "http://x", bundled, fetch: answering("", 503).fetch, log });
    await book.refresh({ quiet: true });
    await book.refresh();
    expect(levels).toEqual(["info", "warn"]);
  });

  it("sessions asking at once share one fetch", async () => {
    const source = answering("2.3000.300");
    const book = new VersionBook({ sourceUrl: "http://x", bundled, fetch: source.fetch });
    expect(await Promise.all([book.refresh(), book.refresh(), book.refresh()])).toEqual([true, true, true]);
    expect(source.calls()).toBe(1);
  });
});
