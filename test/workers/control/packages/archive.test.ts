// The .tar.gz reader and writer of company packages: round trips, and every malformed or hostile
// archive (traversal, links, oversize, bombs, not gzip, not tar, not UTF-8) refused with a precise 400.
import { describe, expect, it } from "vitest";
import {
  assertSafePackagePath,
  PACKAGE_LIMITS,
  type PackageFiles,
  packTarGz,
  unpackTarGz,
} from "../../../../workers/control/packages/archive";

const encoder = new TextEncoder();

interface RawEntry {
  name: string;
  type?: string;
  content?: Uint8Array | string;
  /** Declared size when it differs from the content (headers of streamed bombs). */
  size?: number;
  prefix?: string;
  linkname?: string;
}

function putText(block: Uint8Array, offset: number, text: string): void {
  block.set(encoder.encode(text), offset);
}

/** A ustar header written by hand, so names the writer would refuse can be tested on the reader. */
function rawHeader(entry: RawEntry, size: number): Uint8Array {
  const block = new Uint8Array(512);
  putText(block, 0, entry.name);
  putText(block, 100, "0000644\0");
  putText(block, 124, `${size.toString(8).padStart(11, "0")}\0`);
  putText(block, 136, "00000000000\0");
  block.fill(0x20, 148, 156);
  putText(block, 156, entry.type ?? "0");
  if (entry.linkname) putText(block, 157, entry.linkname);
  putText(block, 257, "ustar\u000000");
  if (entry.prefix) putText(block, 345, entry.prefix);
  const sum = block.reduce((total, byte) => total + byte, 0);
  putText(block, 148, `${sum.toString(8).padStart(6, "0")}\0 `);
  return block;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function rawTar(entries: RawEntry[], withEnd = true): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const entry of entries) {
    const content =
      typeof entry.content === "string"
        ? encoder.encode(entry.content)
        : (entry.content ?? new Uint8Array(0));
    parts.push(rawHeader(entry, entry.size ?? content.length), content);
    parts.push(new Uint8Array((512 - (content.length % 512)) % 512));
  }
  if (withEnd) parts.push(new Uint8Array(1024));
  return concat(parts);
}

async function gz(data: Uint8Array | ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const stream = data instanceof Uint8Array ? new Blob([data]).stream() : data;
  return new Uint8Array(await new Response(stream.pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
}

/** A tar of `count` files of `size` zero bytes each, generated lazily so the test never holds it whole. */
function zeroFilesTar(count: number, size: number): ReadableStream<Uint8Array> {
  const chunk = 1024 * 1024;
  let file = 0;
  let written = -1; // -1: header not yet written
  return new ReadableStream({
    pull(controller) {
      if (file === count) {
        controller.enqueue(new Uint8Array(1024));
        controller.close();
        return;
      }
      if (written === -1) {
        controller.enqueue(rawHeader({ name: `pkg/zero-${file}.md` }, size));
        written = 0;
        return;
      }
      const step = Math.min(chunk, Math.ceil(size / 512) * 512 - written);
      controller.enqueue(new Uint8Array(step));
      written += step;
      if (written >= size) {
        file += 1;
        written = -1;
      }
    },
  });
}

const tarGz = async (entries: RawEntry[]) => gz(rawTar(entries));
const rejection = (detail: string | RegExp) => ({
  status: 400,
  detail: typeof detail === "string" ? expect.stringContaining(detail) : expect.stringMatching(detail),
});

describe("packTarGz / unpackTarGz round trip", () => {
  const longDir = `${"deep-directory-name/".repeat(7)}and-more`;
  const files: PackageFiles = {
    "COMPANY.md": "---\nname: Acme\n---\n# Acme\n",
    "agents/ünïcødé-🤖/AGENTS.md": "Héllo wörld — 世界 🎉\n",
    "a/b/c/d/e/f/nested.md": "deep\n",
    [`${longDir}/${"x".repeat(90)}.md`]: "long name via the ustar prefix field\n",
    "empty.md": "",
    "exact-512.md": "y".repeat(512),
  };

  it("gives back the same files under a root directory, which the reader strips", async () => {
    const bytes = await packTarGz(files, "acme");
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    expect(await unpackTarGz(bytes)).toEqual(files);
  });

  it("gives back the same files without a root directory", async () => {
    expect(await unpackTarGz(await packTarGz(files, ""))).toEqual(files);
  });

  it("refuses unsafe paths and names too long for ustar when writing", async () => {
    await expect(packTarGz({ "../evil.md": "x" }, "root")).rejects.toMatchObject(rejection('"../evil.md"'));
    await expect(packTarGz({ "ok.md": "x" }, "/abs")).rejects.toMatchObject(rejection('"/abs"'));
    const unsplittable = `${"n".repeat(120)}.md`;
    await expect(packTarGz({ [unsplittable]: "x" }, "")).rejects.toMatchObject(
      rejection("too long for a tar archive"),
    );
  });
});

describe("unpackTarGz reads what GitHub serves", () => {
  it("ignores the pax global header and directories and strips <owner>-<repo>-<sha>/", async () => {
    const bytes = await tarGz([
      {
        name: "pax_global_header",
        type: "g",
        content: "52 comment=0123456789abcdef0123456789abcdef01234567\n",
      },
      { name: "acme-pkg-abc123/", type: "5" },
      { name: "acme-pkg-abc123/COMPANY.md", content: "# Acme\n" },
      { name: "acme-pkg-abc123/agents/", type: "5" },
      { name: "acme-pkg-abc123/agents/lead/AGENTS.md", content: "lead\n" },
    ]);
    expect(await unpackTarGz(bytes)).toEqual({ "COMPANY.md": "# Acme\n", "agents/lead/AGENTS.md": "lead\n" });
  });

  it("keeps paths when the files do not all share one top directory", async () => {
    const bytes = await tarGz([
      { name: "pkg/COMPANY.md", content: "a" },
      { name: "README.md", content: "b" },
    ]);
    expect(await unpackTarGz(bytes)).toEqual({ "pkg/COMPANY.md": "a", "README.md": "b" });
  });

  it("takes a long name from a pax extended header and accepts ./-prefixed names", async () => {
    const path = `root/${"p".repeat(150)}/file.md`;
    const record = ` path=${path}\n`;
    const length = String(record.length + String(record.length).length + 1);
    const bytes = await tarGz([
      { name: "PaxHeader/x", type: "x", content: `${length}${record}` },
      { name: "truncated-name", content: "long" },
      { name: "./root/short.md", content: "short" },
    ]);
    expect(await unpackTarGz(bytes)).toEqual({ [`${"p".repeat(150)}/file.md`]: "long", "short.md": "short" });
  });
});

describe("unpackTarGz refuses hostile entries", () => {
  it.each([
    ["../evil", "../evil", '".."'],
    ["/abs", "/abs", "absolute"],
    ["a\\b", "a\\b", "backslash"],
    ["pkg/../../etc/passwd", "pkg/../../etc/passwd", '".."'],
    ["a//b", "a//b", "empty segment"],
  ])("%s", async (_label, name, reason) => {
    const bytes = await tarGz([
      { name: "pkg/ok.md", content: "ok" },
      { name, content: "bad" },
    ]);
    await expect(unpackTarGz(bytes)).rejects.toMatchObject(rejection(`"${name}" `));
    await expect(unpackTarGz(bytes)).rejects.toMatchObject(rejection(reason));
  });

  it("refuses a traversal hidden in the ustar prefix field", async () => {
    const bytes = await tarGz([{ name: "evil.md", prefix: "..", content: "x" }]);
    await expect(unpackTarGz(bytes)).rejects.toMatchObject(rejection('"../evil.md"'));
  });

  it.each([
    ["2", "a symbolic link"],
    ["1", "a hard link"],
    ["3", "a character device"],
    ["6", "a FIFO"],
    ["L", 'an unsupported entry (type "L")'],
  ])("refuses entry type %s", async (type, kind) => {
    const bytes = await tarGz([{ name: "pkg/link", type, linkname: "/etc/passwd" }]);
    await expect(unpackTarGz(bytes)).rejects.toMatchObject(
      rejection(`"pkg/link" is ${kind}; only regular files`),
    );
  });

  it("refuses a file that is not UTF-8 text, naming it", async () => {
    const bytes = await tarGz([{ name: "pkg/bin.md", content: new Uint8Array([0x66, 0xff, 0xfe, 0x00]) }]);
    await expect(unpackTarGz(bytes)).rejects.toMatchObject(rejection('"pkg/bin.md" is not UTF-8 text'));
  });

  it("refuses the same path twice", async () => {
    const bytes = await tarGz([
      { name: "a.md", content: "1" },
      { name: "a.md", content: "2" },
    ]);
    await expect(unpackTarGz(bytes)).rejects.toMatchObject(rejection('"a.md" twice'));
  });
});

describe("unpackTarGz enforces the limits", () => {
  it("refuses a file over the per-file limit", async () => {
    const big = new Uint8Array(PACKAGE_LIMITS.maxFileBytes + 1).fill(0x61);
    const bytes = await tarGz([{ name: "pkg/big.md", content: big }]);
    await expect(unpackTarGz(bytes)).rejects.toMatchObject(
      rejection(`"pkg/big.md" is larger than ${PACKAGE_LIMITS.maxFileBytes} bytes`),
    );
  });

  it("refuses more files than the limit", async () => {
    const entries = Array.from({ length: PACKAGE_LIMITS.maxFiles + 1 }, (_, i) => ({ name: `f${i}.md` }));
    await expect(unpackTarGz(await tarGz(entries))).rejects.toMatchObject(
      rejection(`more than ${PACKAGE_LIMITS.maxFiles} files`),
    );
  });

  it("refuses a huge zero file that compresses to almost nothing, after reading its header", async () => {
    const bytes = await gz(zeroFilesTar(1, 64 * 1024 * 1024));
    expect(bytes.length).toBeLessThan(PACKAGE_LIMITS.maxArchiveBytes / 10);
    const started = Date.now();
    await expect(unpackTarGz(bytes)).rejects.toMatchObject(rejection("is larger than"));
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("refuses files that each fit but add up past the total", async () => {
    const count = Math.floor(PACKAGE_LIMITS.maxTotalBytes / PACKAGE_LIMITS.maxFileBytes) + 1;
    const bytes = await gz(zeroFilesTar(count, PACKAGE_LIMITS.maxFileBytes));
    await expect(unpackTarGz(bytes)).rejects.toMatchObject(
      rejection(`add up to more than ${PACKAGE_LIMITS.maxTotalBytes} bytes`),
    );
  });

  it("refuses an archive over the compressed limit before inflating it", async () => {
    const bytes = new Uint8Array(PACKAGE_LIMITS.maxArchiveBytes + 1);
    bytes.set([0x1f, 0x8b]);
    await expect(unpackTarGz(bytes)).rejects.toMatchObject(
      rejection(`larger than ${PACKAGE_LIMITS.maxArchiveBytes} bytes`),
    );
  });
});

describe("unpackTarGz refuses what is not a .tar.gz", () => {
  it("not gzip", async () => {
    await expect(unpackTarGz(encoder.encode("PK\u0003\u0004 a zip"))).rejects.toMatchObject(
      rejection("not gzip-compressed"),
    );
  });

  it("corrupt gzip", async () => {
    const bytes = await tarGz([{ name: "a.md", content: "x".repeat(5000) }]);
    const corrupt = bytes.slice();
    corrupt.fill(0xff, 10, 40);
    await expect(unpackTarGz(corrupt)).rejects.toMatchObject(rejection("not valid gzip data"));
  });

  it("gzip of something that is not tar", async () => {
    await expect(unpackTarGz(await gz(encoder.encode("just text ".repeat(100))))).rejects.toMatchObject(
      rejection("not a valid tar archive"),
    );
  });

  it("a truncated tar", async () => {
    const tar = rawTar([{ name: "a.md", content: "x".repeat(2000) }], false);
    await expect(unpackTarGz(await gz(tar.subarray(0, 1024)))).rejects.toMatchObject(rejection("truncated"));
  });

  it("an archive without files", async () => {
    await expect(unpackTarGz(await tarGz([{ name: "dir/", type: "5" }]))).rejects.toMatchObject(
      rejection("contains no files"),
    );
  });
});

describe("assertSafePackagePath", () => {
  it.each(["COMPANY.md", "agents/lead/AGENTS.md", "a/b c/ünï.md", ".switchboard.yaml", "x".repeat(300)])(
    "accepts %s",
    (path) => expect(() => assertSafePackagePath(path)).not.toThrow(),
  );

  it.each([
    ["", "is empty"],
    ["../a", '".."'],
    ["a/..", '".."'],
    ["/a", "absolute"],
    ["a\\b", "backslash"],
    ["a\0b", "NUL"],
    ["a//b", "empty segment"],
    ["a/", "empty segment"],
    ["./a", '"."'],
    ["x".repeat(301), "longer than 300"],
  ])("refuses %j (%s)", (path, reason) => {
    expect(() => assertSafePackagePath(path)).toThrow(expect.objectContaining(rejection(reason)));
  });
});
