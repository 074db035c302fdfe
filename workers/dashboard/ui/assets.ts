import { DASHBOARD_JS } from "./assets/client";
import { DASHBOARD_CSS } from "./assets/styles";
import type { DashboardApp } from "./env";

/** FNV-1a: a short content hash, so a changed asset gets a new URL and the old one can be cached forever. */
function contentHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}

export const STYLESHEET_URL = `/assets/dashboard-${contentHash(DASHBOARD_CSS)}.css`;
export const SCRIPT_URL = `/assets/dashboard-${contentHash(DASHBOARD_JS)}.js`;

const IMMUTABLE = "public, max-age=31536000, immutable";

/** A plain square in the header's colour: browsers ask for it on every first visit. */
const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#102a43"/></svg>';

export function registerAssets(app: DashboardApp): void {
  app.get("/favicon.ico", (c) =>
    c.body(FAVICON_SVG, 200, { "Content-Type": "image/svg+xml", "Cache-Control": "public, max-age=86400" }),
  );
  app.get(STYLESHEET_URL, (c) =>
    c.body(DASHBOARD_CSS, 200, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": IMMUTABLE }),
  );
  app.get(SCRIPT_URL, (c) =>
    c.body(DASHBOARD_JS, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": IMMUTABLE,
    }),
  );
}
