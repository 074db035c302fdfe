// Package sources: inline files validated like an archive, `.tar.gz` URLs and GitHub repositories
// fetched (fetch is stubbed here; test/e2e/package-github.test.ts runs a real mimic server).
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PACKAGE_LIMITS, type PackageFiles, packTarGz } from "../../../../workers/control/packages/archive";
import {
  loadPackageSource,
  PackageSourceSchema,
  parseGithubUrl,
} from "../../../../workers/control/packages/source";
import type { Env } from "../../../../workers/core/env";

const FILES: PackageFiles = { "COMPANY.md": "# Acme\n", "agents/lead/AGENTS.md": "lead\n" };
const GITHUB_API = "https://github-mimic.test";
const testEnv = (): Env => ({ ...env, GITHUB_API_URL: GITHUB_API, WEBHOOK_ALLOWED_HOSTS: "" });
const rejection = (detail: string) => ({ status: 400, detail: expect.stringContaining(detail) });

type Handler = (request: Request) => Response | Promise<Response>;

/** Replaces fetch for one test; every request the code makes is recorded. */
function stubFetch(handler: Handler): Request[] {
  const seen: Request[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    seen.push(request);
    return handler(request);
  });
  return seen;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("PackageSourceSchema", () => {
  it("accepts the three source types", () => {
    expect(PackageSourceSchema.safeParse({ type: "inline", files: FILES, rootPath: "acme" }).success).toBe(
      true,
    );
    expect(PackageSourceSchema.safeParse({ type: "url", url: "https://example.com/p.tar.gz" }).success).toBe(
      true,
    );
    expect(PackageSourceSchema.safeParse({ type: "github", url: "https://github.com/a/b" }).success).toBe(
      true,
    );
  });

  it("refuses unknown types, extra keys and non-text files", () => {
    expect(PackageSourceSchema.safeParse({ type: "s3", url: "x" }).success).toBe(false);
    expect(PackageSourceSchema.safeParse({ type: "url", url: "https://a.b/c", token: "x" }).success).toBe(
      false,
    );
    expect(PackageSourceSchema.safeParse({ type: "inline", files: { "a.md": 1 } }).success).toBe(false);
  });
});

describe("inline sources", () => {
  const load = (files: PackageFiles, rootPath?: string) =>
    loadPackageSource(testEnv(), { type: "inline", files, rootPath });

  it("returns valid files as given", async () => {
    expect(await load(FILES, "acme")).toEqual(FILES);
  });

  it.each([
    ["../evil.md", '"../evil.md"'],
    ["/abs.md", '"/abs.md"'],
    ["a\\b.md", "backslash"],
    ["a\0b.md", "NUL"],
  ])("refuses the path %j", async (path, detail) => {
    await expect(load({ ...FILES, [path]: "x" })).rejects.toMatchObject(rejection(detail));
  });

  it("refuses an unsafe rootPath, no files, too many files, a big file and a big total", async () => {
    await expect(load(FILES, "../up")).rejects.toMatchObject(rejection('"../up"'));
    await expect(load({})).rejects.toMatchObject(rejection("no files"));
    const many = Object.fromEntries(
      Array.from({ length: PACKAGE_LIMITS.maxFiles + 1 }, (_, i) => [`f${i}.md`, ""]),
    );
    await expect(load(many)).rejects.toMatchObject(rejection(`more than ${PACKAGE_LIMITS.maxFiles} files`));
    const big = "é".repeat(PACKAGE_LIMITS.maxFileBytes / 2 + 1); // 2 bytes each in UTF-8
    await expect(load({ "big.md": big })).rejects.toMatchObject(rejection('"big.md" is larger than'));
    const chunk = "x".repeat(PACKAGE_LIMITS.maxFileBytes);
    const total = Object.fromEntries(
      Array.from({ length: PACKAGE_LIMITS.maxTotalBytes / PACKAGE_LIMITS.maxFileBytes + 1 }, (_, i) => [
        `f${i}.md`,
        chunk,
      ]),
    );
    await expect(load(total)).rejects.toMatchObject(rejection("add up to more than"));
  });
});

describe("parseGithubUrl", () => {
  it.each([
    ["https://github.com/acme/pkg", { owner: "acme", repo: "pkg" }],
    ["https://github.com/acme/pkg/", { owner: "acme", repo: "pkg" }],
    ["https://github.com/acme/pkg.git", { owner: "acme", repo: "pkg" }],
    ["https://github.com/acme/my.pkg_2/tree/main", { owner: "acme", repo: "my.pkg_2", ref: "main" }],
    ["https://github.com/acme/pkg/tree/feature/x-1", { owner: "acme", repo: "pkg", ref: "feature/x-1" }],
  ])("reads %s", (url, expected) => {
    expect(parseGithubUrl(url)).toEqual(expected);
  });

  it.each([
    "http://github.com/acme/pkg",
    "https://gitlab.com/acme/pkg",
    "https://api.github.com/repos/acme/pkg",
    "https://github.com/acme",
    "https://github.com/acme/pkg/blob/main/README.md",
    "https://github.com/acme/pkg/tree/",
    "https://github.com/acme/pkg/tree/a..b",
    "https://github.com/acme/pkg?ref=main",
    "https://github.com/acme/pkg#main",
    "https://user:pw@github.com/acme/pkg",
    "https://github.com:8443/acme/pkg",
    "https://github.com/-acme/pkg",
    "https://github.com/acme/..",
    "not a url",
  ])("refuses %s", (url) => {
    expect(() => parseGithubUrl(url)).toThrow(expect.objectContaining(rejection("GitHub source must be")));
  });
});

describe("github sources", () => {
  const load = (url: string) => loadPackageSource(testEnv(), { type: "github", url });

  it("fetches the tarball of HEAD or the ref through the configured API and unpacks it", async () => {
    const archive = await packTarGz(FILES, "acme-pkg-abc123");
    const seen = stubFetch(() => new Response(archive));
    expect(await load("https://github.com/acme/pkg")).toEqual(FILES);
    expect(await load("https://github.com/acme/pkg/tree/release/v1")).toEqual(FILES);
    expect(seen.map((r) => r.url)).toEqual([
      `${GITHUB_API}/repos/acme/pkg/tarball/HEAD`,
      `${GITHUB_API}/repos/acme/pkg/tarball/release/v1`,
    ]);
    expect(seen[0]?.headers.get("accept")).toBe("application/vnd.github+json");
    expect(seen[0]?.headers.get("user-agent")).toBe("switchboard");
    expect(seen[0]?.redirect).toBe("follow");
  });

  it("defaults to api.github.com", async () => {
    const seen = stubFetch(() => new Response(null, { status: 404 }));
    const { GITHUB_API_URL: _unset, ...rest } = testEnv();
    await expect(
      loadPackageSource(rest, { type: "github", url: "https://github.com/a/b" }),
    ).rejects.toThrow();
    expect(seen[0]?.url).toBe("https://api.github.com/repos/a/b/tarball/HEAD");
  });

  it("turns GitHub's answers and failures into precise 400s", async () => {
    stubFetch(() => new Response("{}", { status: 404 }));
    await expect(load("https://github.com/acme/missing")).rejects.toMatchObject(
      rejection("GitHub repository or ref not found: acme/missing"),
    );
    vi.restoreAllMocks();
    stubFetch(() => new Response("rate limited", { status: 403 }));
    await expect(load("https://github.com/acme/pkg")).rejects.toMatchObject(
      rejection("GitHub answered HTTP 403"),
    );
    vi.restoreAllMocks();
    stubFetch(() => Promise.reject(new TypeError("Network connection lost.")));
    await expect(load("https://github.com/acme/pkg")).rejects.toMatchObject(
      rejection("is unreachable: Network connection lost."),
    );
    vi.restoreAllMocks();
    stubFetch(() => new Response("<html>not an archive</html>"));
    await expect(load("https://github.com/acme/pkg")).rejects.toMatchObject(rejection("not gzip-compressed"));
  });

  it("refuses a body over the archive limit, declared or streamed", async () => {
    const max = PACKAGE_LIMITS.maxArchiveBytes;
    stubFetch(() => new Response("x", { headers: { "content-length": String(max + 1) } }));
    await expect(load("https://github.com/acme/pkg")).rejects.toMatchObject(
      rejection(`larger than ${max} bytes`),
    );
    vi.restoreAllMocks();
    const streamed = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let sent = 0; sent <= max; sent += 1024 * 1024)
            controller.enqueue(new Uint8Array(1024 * 1024));
          controller.close();
        },
      });
    stubFetch(() => new Response(streamed()));
    await expect(load("https://github.com/acme/pkg")).rejects.toMatchObject(
      rejection(`larger than ${max} bytes`),
    );
  });
});

describe("url sources", () => {
  const load = (url: string, overrides: Partial<Env> = {}) =>
    loadPackageSource({ ...testEnv(), ...overrides }, { type: "url", url });

  it("fetches a .tar.gz, following redirects", async () => {
    const archive = await packTarGz(FILES, "pkg");
    const seen = stubFetch((request) =>
      request.url.endsWith("/old.tar.gz")
        ? new Response(null, { status: 302, headers: { location: "/new.tar.gz" } })
        : new Response(archive),
    );
    expect(await load("https://packages.example.com/old.tar.gz")).toEqual(FILES);
    expect(seen.map((r) => r.url)).toEqual([
      "https://packages.example.com/old.tar.gz",
      "https://packages.example.com/new.tar.gz",
    ]);
  });

  it("refuses other schemes, private hosts and redirects into them, and names a failing status", async () => {
    await expect(load("ftp://example.com/p.tar.gz")).rejects.toMatchObject(rejection("http or https"));
    await expect(load("http://10.1.2.3/p.tar.gz")).rejects.toMatchObject(rejection("private address"));
    await expect(load("http://localhost:8080/p.tar.gz")).rejects.toMatchObject(
      rejection("not a public host"),
    );
    stubFetch(() => new Response(null, { status: 301, headers: { location: "http://169.254.169.254/" } }));
    await expect(load("https://example.com/p.tar.gz")).rejects.toMatchObject(rejection("private address"));
    vi.restoreAllMocks();
    stubFetch(() => new Response("gone", { status: 410 }));
    await expect(load("https://example.com/p.tar.gz")).rejects.toMatchObject(rejection("answered HTTP 410"));
  });

  it("allows a private host listed in WEBHOOK_ALLOWED_HOSTS", async () => {
    const archive = await packTarGz(FILES, "");
    stubFetch(() => new Response(archive));
    expect(await load("http://127.0.0.1:9/p.tar.gz", { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1" })).toEqual(FILES);
  });

  it("says when the server does not answer in time", async () => {
    const timeout = new DOMException("The operation was aborted due to timeout", "TimeoutError");
    stubFetch(() => Promise.reject(timeout));
    await expect(load("https://example.com/p.tar.gz")).rejects.toMatchObject(
      rejection("did not answer within 15 s"),
    );
  });
});
