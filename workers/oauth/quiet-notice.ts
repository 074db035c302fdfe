/**
 * @cloudflare/workers-oauth-provider prints, when its module is first evaluated, a warning that Client
 * ID Metadata Documents are off unless `global_fetch_strictly_public` is set. They are off on purpose
 * (that flag would also stop webhooks to private hosts: docs/decisions.md), so the line is noise on
 * every Worker start, and `npm start` promises quiet, truthful output. This module is imported right
 * before the library (library.ts): it drops that one message and nothing else, until library.ts,
 * evaluated after the library, puts console.warn back.
 */
const CIMD_NOTICE = "CIMD (Client ID Metadata Document) is disabled";
const warn = console.warn;

console.warn = (...args: unknown[]) => {
  if (typeof args[0] === "string" && args[0].startsWith(CIMD_NOTICE)) return;
  warn(...args);
};

export function restoreWarnings(): void {
  console.warn = warn;
}
