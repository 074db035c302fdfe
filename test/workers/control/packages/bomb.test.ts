// Issue 25 H-b: a gzip bomb given as an import's URL source, in real workerd. The review's 2 MiB
// .tar.gz of 2 GiB zeros held the Worker for 37.8 s (the whole archive was inflated before the tar
// reader saw its first header). Now it is refused with a 400 naming the limit, nothing is written,
// and /api/health keeps answering within 1 s meanwhile.
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { MAX_INFLATED_BYTES, PACKAGE_LIMITS } from "../../../../workers/control/packages/archive";
import { call } from "../../helpers";
import { slowestHealthWhile } from "../../responsiveness";
import { type BoardUser, boardUser, type SeededCompany, seedCompany } from "../helpers";
import { type BombEntry, gzipBomb } from "./bombs";
import { tableCounts } from "./fixtures";

const TWO_GIB_IN_MIB = 2048;
const BOMB_URL = "http://127.0.0.1:9/bomb.tar.gz";

let board: BoardUser;
let company: SeededCompany;

beforeAll(async () => {
  board = await boardUser();
  company = await seedCompany(board);
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The package URL answers `bytes` (the Worker's fetch, in this isolate, is the stub). */
function serveArchive(bytes: Uint8Array): void {
  vi.spyOn(globalThis, "fetch").mockImplementation(
    async () => new Response(bytes.slice(), { headers: { "content-type": "application/gzip" } }),
  );
}

/** An import of the URL source, with /api/health probed until it is answered. */
async function importWhileProbing(path: "preview" | "apply") {
  return slowestHealthWhile(
    call<{ error: string }>("POST", `/api/companies/${company.id}/imports/${path}`, {
      headers: board.headers,
      body: { source: { type: "url", url: BOMB_URL }, target: { mode: "new_company" } },
    }),
  );
}

describe("a gzip bomb as an import source", () => {
  const cases: Array<[string, BombEntry, RegExp]> = [
    [
      "a directory entry declaring 2 GiB of data: refused once the inflated bytes pass the cap",
      { name: "pkg/", type: "5", size: TWO_GIB_IN_MIB * 1024 * 1024 },
      new RegExp(`Package archive inflates to more than ${MAX_INFLATED_BYTES} bytes`),
    ],
    [
      "a file entry declaring 2 GiB: refused at its header, naming the per-file limit",
      { name: "pkg/zeros.md", type: "0", size: TWO_GIB_IN_MIB * 1024 * 1024 },
      new RegExp(`"pkg/zeros.md" is larger than ${PACKAGE_LIMITS.maxFileBytes} bytes`),
    ],
  ];

  it.each(cases)("%s; /api/health answers within 1 s; nothing written", async (_label, entry, refusal) => {
    const bomb = gzipBomb(entry, TWO_GIB_IN_MIB);
    expect(bomb.length).toBeLessThan(2.2 * 1024 * 1024);
    serveArchive(bomb);
    const before = await tableCounts();
    for (const path of ["preview", "apply"] as const) {
      const { slowestMs, result } = await importWhileProbing(path);
      expect(slowestMs).toBeLessThan(1000);
      expect(result.status, JSON.stringify(result.body)).toBe(400);
      expect(result.body.error).toMatch(refusal);
    }
    expect(await tableCounts()).toEqual(before);
  });

  it("2 GiB of bare zeros (the review's archive) is an empty archive, answered at once", async () => {
    serveArchive(gzipBomb(null, TWO_GIB_IN_MIB));
    const { slowestMs, result } = await importWhileProbing("preview");
    expect(slowestMs).toBeLessThan(1000);
    expect(result.status, JSON.stringify(result.body)).toBe(400);
    expect(result.body.error).toMatch(/Package archive contains no files/);
  });
});
