/**
 * Which WhatsApp Web version a socket announces. WhatsApp retires versions and then refuses them
 * (405), which used to leave every session `failed` until an operator set WA_VERSION by hand. Now:
 * WA_VERSION pins it; otherwise the current version is fetched from a source (by default WhatsApp
 * Web's own service worker, as Baileys' `fetchLatestWaWebVersion` reads it), refreshed on a 405 and
 * retried once; offline, the version that last connected this session (the edge keeps it) is used
 * when newer than the one Baileys bundles. docs/sessions.md "WhatsApp Web version".
 */
import type { Log } from "../shared/log.ts";

export type WaVersionTuple = [number, number, number];

/** Where a version came from, as the session page shows it. */
export type WaVersionSource = "pinned" | "fetched" | "edge" | "bundled";

export interface WaVersion {
  version: WaVersionTuple;
  source: WaVersionSource;
}

/** WhatsApp Web's service worker carries `"client_revision":<n>`; the version is 2.3000.<n>. */
export const DEFAULT_VERSION_URL = "https://web.whatsapp.com/sw.js";
const FETCH_TIMEOUT_MS = 5_000;
/** A source's answer larger than this is not a version file. */
const MAX_SOURCE_BYTES = 2 * 1024 * 1024;

export const versionText = (version: WaVersionTuple): string => version.join(".");

export function parseVersionText(text: string): WaVersionTuple | null {
  const match = /^(\d{1,6})\.(\d{1,6})\.(\d{1,12})$/.exec(text.trim());
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : null;
}

/**
 * The version a source names: WhatsApp Web's sw.js (`client_revision`), Baileys' JSON
 * (`{"version":[2,3000,n]}`), or a plain `2.3000.n`. Null when it names none.
 */
export function parseVersionSource(body: string): WaVersionTuple | null {
  const revision = /\\?"client_revision\\?":\s*(\d{1,12})/.exec(body);
  if (revision?.[1]) return [2, 3000, Number(revision[1])];
  const plain = parseVersionText(body);
  if (plain) return plain;
  try {
    const parsed = JSON.parse(body) as { version?: unknown; currentVersion?: unknown };
    const tuple = parsed.version;
    if (Array.isArray(tuple) && tuple.length === 3 && tuple.every((n) => Number.isSafeInteger(n) && n >= 0))
      return [tuple[0], tuple[1], tuple[2]] as WaVersionTuple;
    if (typeof parsed.currentVersion === "string") return parseVersionText(parsed.currentVersion);
  } catch {
    // not JSON
  }
  return null;
}

const isNewer = (a: WaVersionTuple, b: WaVersionTuple): boolean => {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] ?? 0) > (b[i] ?? 0);
  return false;
};

export interface VersionBookOptions {
  /** WA_VERSION: announced as is, never fetched. */
  pinned?: WaVersionTuple;
  /** Where the current version is read; null: never fetched (the bundled or the edge's). */
  sourceUrl: string | null;
  /** The version the Baileys in use bundles. */
  bundled: WaVersionTuple;
  fetch?: typeof fetch;
  log?: Log;
}

/** The process's view of the current version: one fetch shared by every session on this bridge. */
export class VersionBook {
  private latest: WaVersion;
  private inFlight: Promise<boolean> | null = null;

  constructor(private readonly options: VersionBookOptions) {
    this.latest = options.pinned
      ? { version: options.pinned, source: "pinned" }
      : { version: options.bundled, source: "bundled" };
  }

  /** The version for a session's next socket, given the one that last connected it (the edge's copy). */
  forSession(lastGood: WaVersionTuple | null): WaVersion {
    if (this.latest.source === "bundled" && lastGood && isNewer(lastGood, this.latest.version))
      return { version: lastGood, source: "edge" };
    return this.latest;
  }

  /**
   * Whether a socket that announced `announced` would announce something else now (another session's
   * 405 may have updated the book since that socket opened).
   */
  differsFrom(announced: WaVersionTuple | undefined): boolean {
    return announced === undefined || versionText(this.latest.version) !== versionText(announced);
  }

  /**
   * Reads the source again (once for everyone asking at the same time). True when the current
   * version changed. `quiet`: a failure is only worth an info line (the read at start: nothing was
   * refused yet, and an offline machine should start without warnings); after a 405 it is a warning.
   */
  refresh({ quiet = false }: { quiet?: boolean } = {}): Promise<boolean> {
    if (this.options.pinned || !this.options.sourceUrl) return Promise.resolve(false);
    this.inFlight ??= this.fetchLatest(quiet).finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async fetchLatest(quiet: boolean): Promise<boolean> {
    const url = this.options.sourceUrl ?? "";
    try {
      const response = await (this.options.fetch ?? fetch)(url, {
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        headers: { "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Switchboard" },
      });
      const body = await response.text();
      const version = response.ok && body.length <= MAX_SOURCE_BYTES ? parseVersionSource(body) : null;
      if (!version) throw new Error(response.ok ? "no version in the answer" : `HTTP ${response.status}`);
      const changed = versionText(version) !== versionText(this.latest.version);
      this.latest = { version, source: "fetched" };
      this.options.log?.("info", "whatsapp web version fetched", { version: versionText(version), url });
      return changed;
    } catch (error) {
      this.options.log?.(quiet ? "info" : "warn", "whatsapp web version not fetched; using the last known", {
        url,
        error: error instanceof Error ? error.message : String(error),
        version: versionText(this.latest.version),
      });
      return false;
    }
  }
}
