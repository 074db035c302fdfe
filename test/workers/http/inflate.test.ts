// The budgeted inflater every untrusted gzip goes through (workers/http/inflate.ts), in workerd: it
// gives back exactly what was compressed, and refuses (a 400 naming the limit) past its byte cap, past
// its time limit, and on data that is not gzip, without handing the caller a byte beyond the cap.
import { describe, expect, it } from "vitest";
import { BudgetedInflater, type InflateBudget } from "../../../workers/http/inflate";
import { gzipBomb } from "../control/packages/bombs";

const MIB = 1024 * 1024;
const budget = (overrides: Partial<InflateBudget> = {}): InflateBudget => ({
  maxBytes: 64 * MIB,
  maxMs: 10_000,
  label: "Test data",
  ...overrides,
});

async function gzip(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Everything the inflater gives, and the count it had handed out when it refused (if it did). */
async function drain(inflater: BudgetedInflater): Promise<{ bytes: Uint8Array; error: unknown }> {
  const chunks: Uint8Array[] = [];
  try {
    for (let chunk = await inflater.read(); chunk !== null; chunk = await inflater.read()) chunks.push(chunk);
    return { bytes: concat(chunks), error: null };
  } catch (error) {
    inflater.cancel();
    return { bytes: concat(chunks), error };
  }
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, chunk) => n + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/** 3 MiB of text that compresses like a real package (about 4:1), not like zeros. */
function packageLikeText(): Uint8Array {
  const lines = Array.from(
    { length: 60_000 },
    (_, i) => `line ${i}: ${Math.sin(i).toFixed(12)} agent notes\n`,
  );
  return new TextEncoder().encode(lines.join("")).subarray(0, 3 * MIB);
}

describe("BudgetedInflater", () => {
  it("gives back exactly the bytes that were compressed", async () => {
    const original = packageLikeText();
    const { bytes, error } = await drain(new BudgetedInflater(await gzip(original), budget()));
    expect(error).toBeNull();
    expect(bytes.length).toBe(original.length);
    expect(await sha256(bytes)).toBe(await sha256(original)); // toEqual walks 3 MiB slowly
  });

  it("refuses past its byte cap, naming it, having handed out no more than the cap", async () => {
    const cap = 5 * MIB;
    const { bytes, error } = await drain(
      new BudgetedInflater(gzipBomb(null, 512), budget({ maxBytes: cap })),
    );
    expect(error).toMatchObject({ status: 400, detail: `Test data inflates to more than ${cap} bytes` });
    expect(bytes.length).toBeLessThanOrEqual(cap);
  });

  it("refuses past its time limit, naming it", async () => {
    const { error } = await drain(new BudgetedInflater(await gzip(packageLikeText()), budget({ maxMs: 1 })));
    expect(error).toMatchObject({ status: 400, detail: "Test data took more than 0.001 s to inflate" });
  });

  it("refuses corrupt and truncated gzip as not valid gzip data", async () => {
    const good = await gzip(packageLikeText());
    const corrupt = good.slice();
    corrupt.fill(0xff, 10, 60);
    const truncated = good.subarray(0, good.length - 100);
    for (const data of [corrupt, truncated]) {
      const { error } = await drain(new BudgetedInflater(data, budget()));
      expect(error).toMatchObject({ status: 400, detail: "Test data is not valid gzip data" });
    }
  });
});
