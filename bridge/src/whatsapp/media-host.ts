/**
 * Where Baileys downloads files that a message names only by direct path. History-sync chunks beyond
 * the first come that way (`HistorySyncNotification` has a `directPath` but no URL), and Baileys
 * fetches them from its default media host, `mmg.whatsapp.net`, with the global `fetch`. Against a
 * WhatsApp-compatible server other than WhatsApp (WA_WEBSOCKET_URL: the fake WhatsApp in tests) that
 * host must be another one (WA_MEDIA_HOST), or the history chunks on its media host never arrive.
 */
import type { Dispatcher } from "undici";
import { fetchOptionsWith } from "./operations.ts";

export interface MediaDownloads {
  /** Stands in for WhatsApp's default media host (`host[:port]`, WA_MEDIA_HOST). */
  mediaHost?: string;
  /** The fetch dispatcher for downloads (tests: one that trusts the fake media host). */
  mediaDispatcher?: Dispatcher;
}

/** Baileys' `DEF_MEDIA_HOST`: where direct paths without a URL are fetched. */
export const WHATSAPP_MEDIA_ORIGIN = "https://mmg.whatsapp.net";

/** Node's own fetch dispatcher (undici's global one), which fetch has set up by the time it dispatches. */
const globalDispatcher = (): Dispatcher => {
  const dispatcher = (globalThis as Record<symbol, Dispatcher | undefined>)[
    Symbol.for("undici.globalDispatcher.1")
  ];
  if (!dispatcher) throw new Error("fetch has no global dispatcher");
  return dispatcher;
};

/**
 * A fetch dispatcher that sends what is meant for WhatsApp's default media host to `host` (`name[:port]`
 * over HTTPS) and everything else through `through` (Node's global dispatcher unless given).
 */
export function mediaHostDispatcher(host: string, through?: Dispatcher): Dispatcher {
  const origin = new URL(`https://${host}`).origin;
  const redirect: Pick<Dispatcher, "dispatch"> = {
    dispatch(options, handler) {
      const target =
        String(options.origin ?? "") === WHATSAPP_MEDIA_ORIGIN ? { ...options, origin } : options;
      return (through ?? globalDispatcher()).dispatch(target, handler);
    },
  };
  // fetch only ever calls `dispatch` on the dispatcher it is given.
  return redirect as Dispatcher;
}

/**
 * Baileys' fetch options for downloads: through the session's proxy when it has one (`proxied`), else
 * `mediaDispatcher`; what is meant for WhatsApp's default media host goes to `mediaHost` if given.
 */
export function downloadOptions(
  { mediaHost, mediaDispatcher }: MediaDownloads,
  proxied: Dispatcher | undefined,
): { options?: RequestInit } {
  const through = proxied ?? mediaDispatcher;
  if (mediaHost) return { options: fetchOptionsWith(mediaHostDispatcher(mediaHost, through)) };
  return through ? { options: fetchOptionsWith(through) } : {};
}
