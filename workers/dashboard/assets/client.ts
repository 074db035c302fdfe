/**
 * The dashboard's only script (about 170 lines, no framework). Every page works without it; it adds:
 *
 * - `data-live="<seconds>"` on an element with an `id`: the page is re-fetched on that interval and the
 *   element's contents replaced by the fresh copy (skipped while focus is inside it, paused while the
 *   tab is hidden). Status columns, run lists and boards stay current without a reload.
 * - `data-live-feed="<ws path>"` on such an element: the region is re-fetched when the feed announces a
 *   change (workers/control/live), not on a timer. Reconnects with backoff and `?since=<last seq>`, so
 *   changes made while away still refresh it; polls every `data-live` seconds only while disconnected.
 *   Sets `data-live-state` to `open` or `closed` (tests wait for `open`).
 * - `data-session-watch="<ws path>"`: a WebSocket to the session's events; sets `data-view` to
 *   `qr`, `connected` or `waiting`, swaps `img[data-qr]`, and fills `[data-me]` and `[data-state]`.
 * - `button[data-copy="<id>"]`: copies that element's value or text.
 * - `form[data-confirm="<question>"]`: asks before submitting.
 */
export const DASHBOARD_JS = `(() => {
  "use strict";

  function refreshLiveRegions(regions) {
    fetch(location.href, { headers: { "X-Dashboard-Live": "1" }, credentials: "same-origin" })
      .then((res) => {
        if (!res.ok || res.redirected) return null;
        return res.text();
      })
      .then((html) => {
        if (!html) return;
        const fresh = new DOMParser().parseFromString(html, "text/html");
        for (const region of regions) {
          const next = fresh.getElementById(region.id);
          if (!next || next.innerHTML === region.innerHTML) continue;
          if (region.contains(document.activeElement)) continue;
          region.innerHTML = next.innerHTML;
        }
      })
      .catch(() => undefined);
  }

  function startLiveRegions() {
    const regions = Array.from(document.querySelectorAll("[data-live][id]:not([data-live-feed])"));
    if (regions.length === 0) return;
    const seconds = Math.max(1, Math.min(...regions.map((r) => Number(r.dataset.live) || 5)));
    setInterval(() => {
      if (!document.hidden) refreshLiveRegions(regions);
    }, seconds * 1000);
  }

  function watchLiveFeed(region) {
    const url = new URL(region.dataset.liveFeed, location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const pollMs = Math.max(5, Number(region.dataset.live) || 30) * 1000;
    let seq = null;
    let delay = 500;
    let poll = null;
    let queued = null;
    const refresh = () => {
      queued = queued || setTimeout(() => {
        queued = null;
        refreshLiveRegions([region]);
      }, 100);
    };
    const connect = () => {
      if (seq !== null) url.searchParams.set("since", String(seq));
      const socket = new WebSocket(url);
      let ping = null;
      socket.addEventListener("open", () => {
        delay = 500;
        clearInterval(poll);
        poll = null;
        region.dataset.liveState = "open";
        ping = setInterval(() => socket.send("ping"), 30000);
      });
      socket.addEventListener("message", (event) => {
        let frame;
        try {
          frame = JSON.parse(event.data);
        } catch {
          return; // "pong"
        }
        if (frame.type === "hello") {
          if (seq !== null && frame.seq < seq) refresh(); // the feed started over
          if (seq === null || frame.seq < seq) seq = frame.seq;
        } else if (frame.type === "reset" || (frame.type === "event" && frame.seq > seq)) {
          seq = frame.seq;
          refresh();
        }
      });
      socket.addEventListener("close", () => {
        clearInterval(ping);
        region.dataset.liveState = "closed";
        poll = poll || setInterval(() => {
          if (!document.hidden) refreshLiveRegions([region]);
        }, pollMs);
        setTimeout(connect, delay);
        delay = Math.min(delay * 2, 30000);
      });
    };
    connect();
  }

  function describeMe(me) {
    if (!me) return "";
    const phone = String(me.id || "").split(/[:@]/)[0];
    return me.name ? me.name + " (+" + phone + ")" : "+" + phone;
  }

  function applySessionView(box, view) {
    const connected = view.state === "connected";
    const hasQr = !connected && Boolean(view.qrImage);
    box.dataset.view = connected ? "connected" : hasQr ? "qr" : "waiting";
    const img = box.querySelector("img[data-qr]");
    if (img && hasQr && img.getAttribute("src") !== view.qrImage) img.setAttribute("src", view.qrImage);
    for (const el of box.querySelectorAll("[data-me]")) el.textContent = describeMe(view.me);
    for (const el of box.querySelectorAll("[data-state]")) el.textContent = view.status + " (" + view.state + ")";
  }

  function watchSession(box) {
    const url = new URL(box.dataset.sessionWatch, location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    let delay = 500;
    const open = () => {
      const socket = new WebSocket(url);
      socket.addEventListener("open", () => {
        delay = 500;
      });
      socket.addEventListener("message", (event) => {
        try {
          applySessionView(box, JSON.parse(event.data));
        } catch {
          // a frame we do not understand: ignore it
        }
      });
      socket.addEventListener("close", () => {
        setTimeout(open, delay);
        delay = Math.min(delay * 2, 10000);
      });
    };
    open();
  }

  function copyFrom(button) {
    const source = document.getElementById(button.dataset.copy);
    if (!source) return;
    const text = "value" in source ? source.value : source.textContent;
    const done = () => {
      button.textContent = "Copied";
    };
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, () => undefined);
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("button[data-copy]");
    if (button) copyFrom(button);
  });
  document.addEventListener("submit", (event) => {
    const question = event.target.dataset && event.target.dataset.confirm;
    if (question && !window.confirm(question)) event.preventDefault();
  });

  startLiveRegions();
  for (const region of document.querySelectorAll("[data-live-feed][id]")) watchLiveFeed(region);
  for (const box of document.querySelectorAll("[data-session-watch]")) watchSession(box);
})();
`;
