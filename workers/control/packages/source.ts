/**
 * Where an import's package comes from: files in the request body, a `.tar.gz` at a URL, or a GitHub
 * repository fetched as an archive through the GitHub API (the API host is `GITHUB_API_URL`, so tests
 * and GitHub Enterprise can point elsewhere). Every failure is a 400 that says what went wrong.
 */
import { z } from "@hono/zod-openapi";
import type { Env } from "../../core/env";
import { ApiError, badRequest } from "../../http/errors";
import { allowedHostsOf, webhookTargetProblem } from "../../webhooks/targets";
import { assertSafePackagePath, PACKAGE_LIMITS, type PackageFiles, unpackTarGz } from "./archive";

export type PackageSource =
  | { type: "inline"; files: PackageFiles; rootPath?: string }
  | { type: "url"; url: string }
  | { type: "github"; url: string };

const InlineSourceSchema = z
  .object({
    type: z.literal("inline"),
    files: z
      .record(z.string(), z.string())
      .openapi({ description: "Relative posix path → UTF-8 text, as an export returns them" }),
    rootPath: z.string().optional().openapi({ description: "The package's directory name (informative)" }),
  })
  .strict()
  .openapi("InlinePackageSource");

const UrlSourceSchema = z
  .object({
    type: z.literal("url"),
    url: z.string().min(1).max(2048).openapi({ description: "An http(s) URL of a .tar.gz package" }),
  })
  .strict()
  .openapi("UrlPackageSource");

const GithubSourceSchema = z
  .object({
    type: z.literal("github"),
    url: z.string().min(1).max(2048).openapi({
      description: "https://github.com/<owner>/<repo> or https://github.com/<owner>/<repo>/tree/<ref>",
    }),
  })
  .strict()
  .openapi("GithubPackageSource");

export const PackageSourceSchema: z.ZodType<PackageSource> = z
  .discriminatedUnion("type", [InlineSourceSchema, UrlSourceSchema, GithubSourceSchema])
  .openapi("PackageSource");

const FETCH_TIMEOUT_MS = 15_000;
const MAX_REDIRECTS = 5;
const DEFAULT_GITHUB_API_URL = "https://api.github.com";
const encoder = new TextEncoder();

/** The same checks an archive gets: safe paths, file count, per-file and total size. */
function validateInlineFiles(files: PackageFiles, rootPath: string | undefined): PackageFiles {
  if (rootPath) assertSafePackagePath(rootPath);
  const entries = Object.entries(files);
  const { maxFiles, maxFileBytes, maxTotalBytes } = PACKAGE_LIMITS;
  if (entries.length === 0) throw badRequest("Package has no files");
  if (entries.length > maxFiles) throw badRequest(`Package has more than ${maxFiles} files`);
  let total = 0;
  for (const [path, text] of entries) {
    assertSafePackagePath(path);
    const size = encoder.encode(text).length;
    if (size > maxFileBytes) throw badRequest(`Package file "${path}" is larger than ${maxFileBytes} bytes`);
    total += size;
  }
  if (total > maxTotalBytes) throw badRequest(`Package files add up to more than ${maxTotalBytes} bytes`);
  return Object.fromEntries(entries);
}

const isTimeout = (error: unknown) =>
  error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");

/** fetch, with a network failure or the timeout turned into a 400 naming `label`. */
async function send(url: string, init: RequestInit, label: string): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (isTimeout(error)) throw badRequest(`${label} did not answer within ${FETCH_TIMEOUT_MS / 1000} s`);
    const reason = error instanceof Error ? error.message : String(error);
    throw badRequest(`${label} is unreachable: ${reason}`);
  }
}

/** The body, refused as soon as it passes the archive limit (a declared Content-Length is checked first). */
async function readCapped(response: Response, label: string): Promise<Uint8Array> {
  const max = PACKAGE_LIMITS.maxArchiveBytes;
  const tooLarge = () => badRequest(`${label} is larger than ${max} bytes`);
  if (Number(response.headers.get("content-length") ?? 0) > max) {
    await response.body?.cancel();
    throw tooLarge();
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) throw tooLarge();
      chunks.push(value);
    }
  } catch (error) {
    reader.cancel().catch(() => undefined);
    if (isTimeout(error)) throw badRequest(`${label} did not finish within ${FETCH_TIMEOUT_MS / 1000} s`);
    throw error instanceof ApiError ? error : badRequest(`${label} broke off`);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

const isRedirect = (status: number) => [301, 302, 303, 307, 308].includes(status);

/**
 * A user-supplied URL gets the webhook host policy (no private or internal hosts unless listed in
 * WEBHOOK_ALLOWED_HOSTS), checked again on every redirect hop, so a redirect cannot lead inside.
 */
async function fetchUrlArchive(env: Env, sourceUrl: string): Promise<Uint8Array> {
  const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const allowed = allowedHostsOf(env.WEBHOOK_ALLOWED_HOSTS);
  let url = sourceUrl;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const problem = webhookTargetProblem(url, allowed);
    if (problem) throw badRequest(`Package URL refused: ${problem}`);
    const label = `Package URL ${url}`;
    const response = await send(url, { redirect: "manual", signal }, label);
    if (isRedirect(response.status)) {
      await response.body?.cancel();
      const location = response.headers.get("location");
      if (!location) throw badRequest(`${label} answered HTTP ${response.status} without a Location`);
      url = new URL(location, url).href;
      continue;
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw badRequest(`${label} answered HTTP ${response.status}`);
    }
    return readCapped(response, label);
  }
  throw badRequest(`Package URL ${sourceUrl} redirected more than ${MAX_REDIRECTS} times`);
}

interface GithubRepoRef {
  owner: string;
  repo: string;
  ref?: string;
}

const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const NAME = /^[A-Za-z0-9._-]{1,100}$/;
const isSafeName = (segment: string) => NAME.test(segment) && !segment.includes("..") && segment !== ".";

/** https://github.com/<owner>/<repo>[.git][/tree/<ref>] and nothing else (no query, port, credentials). */
export function parseGithubUrl(raw: string): GithubRepoRef {
  const invalid = () =>
    badRequest(
      `GitHub source must be https://github.com/<owner>/<repo> or https://github.com/<owner>/<repo>/tree/<ref>; got "${raw}"`,
    );
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid();
  }
  const plain = !url.port && !url.username && !url.password && !url.search && !url.hash;
  if (url.protocol !== "https:" || url.hostname !== "github.com" || !plain) throw invalid();
  const [owner = "", repoSegment = "", tree, ...refSegments] = url.pathname
    .replace(/\/$/, "")
    .split("/")
    .slice(1);
  const repo = repoSegment.replace(/\.git$/, "");
  if (!OWNER.test(owner) || !isSafeName(repo)) throw invalid();
  if (tree === undefined) return { owner, repo };
  if (tree !== "tree" || refSegments.length === 0 || !refSegments.every(isSafeName)) throw invalid();
  return { owner, repo, ref: refSegments.join("/") };
}

/** GET /repos/{owner}/{repo}/tarball/{ref}: GitHub answers 302 to codeload, which fetch follows. */
async function fetchGithubArchive(env: Env, sourceUrl: string): Promise<Uint8Array> {
  const { owner, repo, ref } = parseGithubUrl(sourceUrl);
  const base = (env.GITHUB_API_URL ?? DEFAULT_GITHUB_API_URL).replace(/\/+$/, "");
  const label = `GitHub archive of ${owner}/${repo}${ref ? `@${ref}` : ""}`;
  const response = await send(
    `${base}/repos/${owner}/${repo}/tarball/${ref ?? "HEAD"}`,
    {
      headers: { Accept: "application/vnd.github+json", "User-Agent": "switchboard" },
      redirect: "follow",
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    },
    label,
  );
  if (response.status === 404) {
    await response.body?.cancel();
    throw badRequest(`GitHub repository or ref not found: ${owner}/${repo}${ref ? `@${ref}` : ""}`);
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw badRequest(`${label}: GitHub answered HTTP ${response.status}`);
  }
  return readCapped(response, label);
}

/** The package's files, validated the same way whichever source they came from. */
export async function loadPackageSource(env: Env, source: PackageSource): Promise<PackageFiles> {
  switch (source.type) {
    case "inline":
      return validateInlineFiles(source.files, source.rootPath);
    case "url":
      return unpackTarGz(await fetchUrlArchive(env, source.url));
    case "github":
      return unpackTarGz(await fetchGithubArchive(env, source.url));
  }
}
