/**
 * The bridge's side of the SSRF guard: the shared address table (test/support/address-cases.ts), and
 * names, whose DNS answers are judged inside the connection's own lookup. A fake resolver stands in
 * for DNS (there is none here), and a local server counts what actually reached it.
 */
import type { LookupAddress } from "node:dns";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { publicLookup } from "../../../bridge/src/media/public-address.ts";
import { fetchPublic } from "../../../bridge/src/media/public-fetch.ts";
import { OperationError } from "../../../bridge/src/protocol/seam.ts";
import { ADDRESS_CASES, INTERNAL_NAMES, NOT_ADDRESSES } from "../../support/address-cases.ts";
import { localServer } from "../support/local-server.ts";

let cleanup: Array<() => Promise<void>> = [];
beforeEach(() => {
  delete process.env.MEDIA_ALLOW_PRIVATE;
});
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** A server on 127.0.0.1 that records each request's path; `?to=` redirects there, `?hops=n` n times. */
async function local(): Promise<{ port: number; seen: string[] }> {
  const seen: string[] = [];
  const server = await localServer((req, res) => {
    seen.push(req.url ?? "");
    const query = new URL(req.url ?? "/", "http://x").searchParams;
    const to = query.get("to");
    const hops = Number(query.get("hops") ?? 0);
    if (to) res.writeHead(302, { location: to }).end();
    else if (hops > 0) res.writeHead(307, { location: `/chain?hops=${hops - 1}` }).end();
    else res.writeHead(200, { "content-type": "text/plain" }).end("inside");
  });
  cleanup.push(server.close);
  return { port: server.port, seen };
}

/** A resolver that answers from `answers` (the last one repeats) and counts its calls. */
function fakeDns(...answers: string[][]) {
  const calls: string[] = [];
  return {
    calls,
    resolve: async (host: string) => {
      calls.push(host);
      return answers[Math.min(calls.length, answers.length) - 1] ?? [];
    },
  };
}

async function refusal(promise: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OperationError) return { status: error.status, message: error.message };
    throw error;
  }
  throw new Error("expected a refusal");
}

/** What the connection's lookup hands back for `host` when DNS answers `answers`. */
function lookUp(
  answers: string[],
  all: boolean,
): Promise<{ error: Error | null; addresses: LookupAddress[] }> {
  const lookup = publicLookup(fakeDns(answers).resolve);
  return new Promise((resolve) => {
    lookup("media.example.com", { all }, (error, address, family) => {
      const addresses = typeof address === "string" ? [{ address, family: family ?? 0 }] : address;
      resolve({ error, addresses: error ? [] : addresses });
    });
  });
}

describe("the bridge's address guard, on DNS answers", () => {
  it.each(ADDRESS_CASES)("$address ($why) is private: $private", async ({ address, private: expected }) => {
    // The verdict the edge reaches on the literal (test/workers/webhooks/targets.test.ts), on the answer.
    const answer = address.replace(/^\[|\]$/g, "");
    for (const all of [true, false]) {
      const { error, addresses } = await lookUp([answer], all);
      if (expected) expect(error?.message).toBe("media.example.com resolves to a private address");
      else expect(addresses.map((entry) => entry.address)).toEqual([answer]);
    }
  });

  it("refuses a DNS answer that is not an address", async () => {
    for (const text of NOT_ADDRESSES) expect((await lookUp([text], true)).error, text).not.toBeNull();
  });
});

describe("media fetches resolve once and dial what they checked", () => {
  it("refuses a name when any DNS answer is private, before connecting", async () => {
    const { port, seen } = await local();
    for (const answers of [
      ["127.0.0.1"],
      ["::1"],
      ["93.184.216.34", "10.0.0.1"],
      ["2606:4700::1111", "64:ff9b::7f00:1"],
      ["::ffff:127.0.0.1"],
      ["8.8.8.8", "2002:7f00:1::"],
    ]) {
      const dns = fakeDns(answers);
      const url = `http://media.example.com:${port}/a.png`;
      expect(
        await refusal(fetchPublic(url, { signal: AbortSignal.timeout(5_000), resolve: dns.resolve })),
      ).toEqual({
        status: 400,
        message: "could not fetch media: media.example.com resolves to a private address",
      });
      expect(dns.calls).toEqual(["media.example.com"]);
    }
    const none = fakeDns([]);
    expect(
      (
        await refusal(
          fetchPublic(`http://media.example.com:${port}/`, {
            signal: AbortSignal.timeout(5_000),
            resolve: none.resolve,
          }),
        )
      ).message,
    ).toBe("could not fetch media: cannot resolve media.example.com");
    expect(seen).toEqual([]);
  });

  it("dials the answer it checked: a name that rebinds to loopback after the check never reaches it", async () => {
    const { port, seen } = await local();
    // Public on the first question, loopback on any later one: a second resolution would land inside.
    const dns = fakeDns(["93.184.216.34"], ["127.0.0.1"]);
    await expect(
      fetchPublic(`http://rebind.example.com:${port}/secret`, {
        signal: AbortSignal.timeout(300),
        resolve: dns.resolve,
      }),
    ).rejects.toThrow();
    expect(dns.calls).toEqual(["rebind.example.com"]);
    expect(seen).toEqual([]);
  });

  it("connects to the resolver's answer: an allowed name reaches the address it resolved to", async () => {
    const { port, seen } = await local();
    const dns = fakeDns(["127.0.0.1"]);
    const response = await fetchPublic(`http://media.example.com:${port}/ok.txt`, {
      signal: AbortSignal.timeout(5_000),
      resolve: dns.resolve,
      allowedHosts: ["media.example.com"],
    });
    expect(await response.text()).toBe("inside");
    expect(dns.calls).toEqual(["media.example.com"]);
    expect(seen).toEqual(["/ok.txt"]);
  });

  it("checks every redirect hop the same way, literals and DNS answers", async () => {
    const { port, seen } = await local();
    const dns = fakeDns(["127.0.0.1"]);
    const options = { signal: AbortSignal.timeout(5_000), resolve: dns.resolve, allowedHosts: ["127.0.0.1"] };
    const via = (to: string) => `http://127.0.0.1:${port}/go?to=${encodeURIComponent(to)}`;
    expect(await refusal(fetchPublic(via(`http://inside.example.com:${port}/secret`), options))).toEqual({
      status: 400,
      message: "could not fetch media: inside.example.com resolves to a private address",
    });
    expect(await refusal(fetchPublic(via(`http://[64:ff9b::7f00:1]:${port}/secret`), options))).toEqual({
      status: 400,
      message: "could not fetch media: 64:ff9b::7f00:1 is a private address",
    });
    expect((await refusal(fetchPublic(via("file:///etc/passwd"), options))).message).toBe(
      "could not fetch media: redirect to a non-HTTP URL",
    );
    expect(seen.every((path) => path.startsWith("/go?"))).toBe(true);
    expect(seen).toHaveLength(3);
  });

  it("refuses names only a local network answers for without asking DNS", async () => {
    const { port, seen } = await local();
    const dns = fakeDns(["127.0.0.1"]);
    for (const name of INTERNAL_NAMES) {
      const url = `http://${name}:${port}/a.png`;
      const host = name.toLowerCase().replace(/\.$/, "");
      expect(
        await refusal(fetchPublic(url, { signal: AbortSignal.timeout(5_000), resolve: dns.resolve })),
      ).toEqual({ status: 400, message: `could not fetch media: ${host} is not a public host name` });
    }
    expect(dns.calls).toEqual([]);
    expect(seen).toEqual([]);
  });

  it("follows at most 5 redirects", async () => {
    const { port, seen } = await local();
    const options = { signal: AbortSignal.timeout(5_000), allowedHosts: ["127.0.0.1"] };
    const five = await fetchPublic(`http://127.0.0.1:${port}/chain?hops=5`, options);
    expect(await five.text()).toBe("inside");
    expect(seen).toHaveLength(6);
    expect((await refusal(fetchPublic(`http://127.0.0.1:${port}/chain?hops=6`, options))).message).toBe(
      "could not fetch media: too many redirects",
    );
    expect(seen).toHaveLength(12);
  });

  it("lets everything through with MEDIA_ALLOW_PRIVATE=1 (local development)", async () => {
    const { port, seen } = await local();
    process.env.MEDIA_ALLOW_PRIVATE = "1";
    try {
      const response = await fetchPublic(`http://127.0.0.1:${port}/dev.txt`, {
        signal: AbortSignal.timeout(5_000),
      });
      expect(await response.text()).toBe("inside");
    } finally {
      delete process.env.MEDIA_ALLOW_PRIVATE;
    }
    expect(seen).toEqual(["/dev.txt"]);
  });
});
