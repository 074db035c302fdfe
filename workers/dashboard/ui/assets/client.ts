import { BOARD_JS } from "./board-client";

/**
 * The dashboard's only script (about 200 lines, no framework). Every page works without it; it adds:
 *
 * - `data-live="<seconds>"` on an element with an `id`: the page is re-fetched on that interval and the
 *   element's contents replaced by the fresh copy (paused while the tab is hidden). A region is left
 *   alone while focus is inside it or a field in it holds something typed and not sent; it catches up
 *   when focus leaves it with nothing left unsent.
 * - `data-live-feed="<ws path>"` on such an element: the region is re-fetched when the feed announces a
 *   change (workers/control/live), not on a timer; regions naming the same feed share one socket.
 *   Reconnects with backoff and `?since=<last seq>`, so changes made while away still refresh it; polls
 *   every `data-live` seconds only while disconnected. Sets `data-live-state` to `open` or `closed`
 *   (tests wait for `open`).
 * - `data-session-watch="<ws path>"`: a WebSocket to the session's events; sets `data-view` to
 *   `qr`, `connected` or `waiting`, swaps `img[data-qr]`, and fills `[data-me]` and `[data-state]`.
 * - A live socket closed because access ended (4403: membership ended or share revoked; 4401: the
 *   credentials changed and this browser's sign-in no longer works) stops reconnecting: the page says
 *   so at the top, offers the way out, and every control in it is disabled, so nothing stale invites
 *   a click that can only fail. A socket closed because the viewer's role changed (4205) reloads the
 *   page, drawn for the new role.
 * - The issue board (`#issue-board`): a card with \`draggable\` moves to the column it is dropped on, and
 *   a focused card moves with Alt+Left/Right Arrow; both post its Edit form with the new status (the
 *   same form a person without script submits), and a refusal (a 422 transition) is shown on the card,
 *   which stays put (and stays said when the board is redrawn). The Edit form itself is sent the same
 *   way and its refusal shown inside it. A region fires \`live-redrawn\` after it is replaced.
 * - `button[data-copy="<id>"]`: copies that element's value or text.
 * - `form[data-confirm="<question>"]`: asks before submitting.
 */
const LIVE_JS = `(() => {
  "use strict";

  /** Something typed and not sent (or a chosen file) that replacing the region would throw away. */
  function holdsUnsent(region) {
    for (const field of region.querySelectorAll("input, textarea, select")) {
      if (field.type === "hidden") continue;
      if (field.type === "file" && field.files.length > 0) return true;
      if ((field.type === "checkbox" || field.type === "radio") && field.checked !== field.defaultChecked)
        return true;
      if (field.tagName === "SELECT") {
        if (Array.from(field.options).some((option) => option.selected !== option.defaultSelected)) return true;
      } else if (field.type !== "checkbox" && field.type !== "radio" && field.value !== field.defaultValue) {
        return true;
      }
    }
    return false;
  }

  /**
   * Someone is at work in the region: typing, choosing, or inside an open menu. A focused card or link
   * is not work in progress: the region refreshes and the same element (by id) gets focus back.
   */
  function isBusy(region) {
    const active = document.activeElement;
    const working =
      region.contains(active) &&
      (active.matches("input, select, textarea, button, summary") || Boolean(active.closest("details[open]")));
    return working || holdsUnsent(region);
  }

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
          if (isBusy(region)) {
            region.dataset.liveStale = "1"; // caught up when focus leaves it (below)
            continue;
          }
          delete region.dataset.liveStale;
          const focusedId = region.contains(document.activeElement) ? document.activeElement.id : "";
          region.innerHTML = next.innerHTML;
          const again = focusedId && document.getElementById(focusedId);
          if (again) again.focus();
          region.dispatchEvent(new CustomEvent("live-redrawn"));
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

  document.addEventListener("focusout", () => {
    setTimeout(() => {
      const stale = Array.from(document.querySelectorAll("[data-live-stale][id]"));
      const ready = stale.filter((region) => !isBusy(region));
      if (ready.length > 0) refreshLiveRegions(ready);
    }, 0);
  });

  const DRAWN_MARGIN_MS = 2000;
  const ACCESS_ENDED = 4403;
  const SIGNED_OUT = 4401;
  const ROLE_CHANGED = 4205;

  /** The notice, once, and every control of the page off (the sign-out form in the header stays). */
  function showAccessEnded(code, reason) {
    if (document.getElementById("access-ended")) return;
    const main = document.getElementById("main") || document.body;
    const notice = document.createElement("div");
    notice.id = "access-ended";
    notice.className = "alert";
    notice.setAttribute("role", "alert");
    const text = document.createElement("p");
    const link = document.createElement("a");
    if (code === SIGNED_OUT) {
      text.textContent = "You were signed out (" + (reason || "credentials changed") + "). This page no longer updates.";
      link.href = "/login?next=" + encodeURIComponent(location.pathname + location.search);
      link.textContent = "Sign in again";
    } else {
      text.textContent = "Your access here has ended (" + (reason || "access ended") + "). This page no longer updates and its controls are off.";
      link.href = "/";
      link.textContent = "Go to your start page";
    }
    notice.append(text, link);
    for (const control of main.querySelectorAll("button, input, select, textarea")) control.disabled = true;
    for (const region of main.querySelectorAll("[data-live-state]")) region.dataset.liveState = "ended";
    main.prepend(notice);
    link.focus();
  }

  /**
   * True when the close means this socket must not simply come back: the page reloads, is told why, or
   * (credentials changed: perhaps only an API key, not this browser's sign-in) reconnects through
   * \`retry\` once the browser's own session is confirmed.
   */
  function endedFor(event, retry) {
    if (event.code === ROLE_CHANGED) {
      location.reload();
      return true;
    }
    if (event.code === ACCESS_ENDED) {
      showAccessEnded(event.code, event.reason);
      return true;
    }
    if (event.code !== SIGNED_OUT) return false;
    fetch("/api/auth/session", { credentials: "same-origin" })
      .then((res) => (res.ok ? retry() : showAccessEnded(event.code, event.reason)))
      .catch(() => retry());
    return true;
  }

  /** One socket for every region that names the same feed. */
  function watchLiveFeed(feed, regions) {
    const url = new URL(feed, location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const pollMs = Math.max(5, Number(regions[0].dataset.live) || 30) * 1000;
    const setState = (state) => {
      for (const region of regions) region.dataset.liveState = state;
    };
    let seq = null;
    let connections = 0;
    const drawn = Number(regions[0].dataset.liveDrawn) || 0;
    // The page's data is read just before it is drawn, on another machine's clock than the feed's.
    const changedSinceDrawn = (at) => typeof at === "number" && at >= drawn - DRAWN_MARGIN_MS;
    let delay = 500;
    let poll = null;
    let queued = null;
    const refresh = () => {
      queued = queued || setTimeout(() => {
        queued = null;
        refreshLiveRegions(regions);
      }, 100);
    };
    const connect = () => {
      connections++;
      if (seq !== null) url.searchParams.set("since", String(seq));
      const socket = new WebSocket(url);
      let ping = null;
      socket.addEventListener("open", () => {
        delay = 500;
        clearInterval(poll);
        poll = null;
        setState("open");
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
          // The feed started over; an earlier socket closed before its hello, so nothing says what
          // changed since the page was drawn; or its newest change came about when it was drawn.
          if (seq === null ? connections > 1 || changedSinceDrawn(frame.at) : frame.seq < seq) refresh();
          if (seq === null || frame.seq < seq) seq = frame.seq;
        } else if (frame.type === "event" && frame.kind === "notification.created") {
          // Someone's inbox, not the page's content: only the viewer's own unread count changes.
          seq = Math.max(seq || 0, frame.seq);
          if (frame.userId === viewerId()) loadUnreadCount();
        } else if (frame.type === "reset" || (frame.type === "event" && frame.seq > seq)) {
          seq = frame.seq;
          refresh();
        }
      });
      socket.addEventListener("close", (event) => {
        clearInterval(ping);
        const retry = () => {
          setState("closed");
          setTimeout(connect, delay);
        };
        if (endedFor(event, retry)) return;
        setState("closed");
        poll = poll || setInterval(() => {
          if (!document.hidden) refreshLiveRegions(regions);
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
      socket.addEventListener("close", (event) => {
        if (endedFor(event, () => setTimeout(open, delay))) return;
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

`;

const START_JS = `
  const unreadBadge = () => document.querySelector("[data-unread-count]");
  const viewerId = () => (unreadBadge() ? unreadBadge().dataset.viewer : "");

  /** One header count from its API route: " (N unread)", hidden at 0. */
  function loadCount(badge, path) {
    if (!badge) return;
    fetch(path, { credentials: "same-origin" })
      .then((res) => (res.ok ? res.json() : null))
      .then((body) => {
        if (!body) return;
        badge.textContent = body.unreadCount > 0 ? " (" + body.unreadCount + " unread)" : "";
        badge.hidden = body.unreadCount === 0;
      })
      .catch(() => undefined);
  }

  /**
   * The header's Inbox and Mine counts: read on load and again when the feed says the viewer got a
   * notification (an assignment or a mention is news on Mine too).
   */
  function loadUnreadCount() {
    loadCount(unreadBadge(), "/api/notifications/unread-count");
    loadCount(document.querySelector("[data-mine-unread-count]"), "/api/agents/me/inbox/mine/unread-count");
  }

  loadUnreadCount();
  startLiveRegions();
  const board = document.getElementById("issue-board");
  if (board) startBoard(board);
  const feeds = new Map();
  for (const region of document.querySelectorAll("[data-live-feed][id]")) {
    const regions = feeds.get(region.dataset.liveFeed) || [];
    feeds.set(region.dataset.liveFeed, regions.concat(region));
  }
  for (const [feed, regions] of feeds) watchLiveFeed(feed, regions);
  for (const box of document.querySelectorAll("[data-session-watch]")) watchSession(box);
})();
`;

/** The whole script, one function: the live parts above, the board's (board-client.ts), then start-up. */
export const DASHBOARD_JS = `${LIVE_JS}${BOARD_JS}${START_JS}`;
