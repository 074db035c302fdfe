/**
 * The issue board's part of the dashboard script (joined into DASHBOARD_JS by client.ts, inside its
 * one function): drag a card to a column, Alt+Left/Right Arrow on a focused card, and the card's Edit
 * form sent in place (Escape closes it unsaved). All three post the card's Edit form to the dashboard
 * with \`X-Dashboard-Fetch: 1\` (the same form that works without script) and show a refusal on the
 * card, which stays put.
 */
export const BOARD_JS = `
  /** Posts a card's Edit form (with \`changes\`); resolves to the dashboard's {ok, message}. */
  function sendQuickEdit(form, changes) {
    const data = new FormData(form);
    for (const [name, value] of Object.entries(changes || {})) data.set(name, value);
    return fetch(form.action, {
      method: "POST",
      body: new URLSearchParams(data),
      headers: { "X-Dashboard-Fetch": "1" },
      credentials: "same-origin",
    })
      .then((res) => res.json())
      .catch(() => ({ ok: false, message: "The change could not be sent; check the connection and try again." }));
  }

  function showOnCard(card, selector, message) {
    const box = card.querySelector(selector);
    if (!box) return;
    box.textContent = message || "";
    box.hidden = !message;
  }

  /** Refused moves by card id: a redraw of the board (another card's change) must not unsay them. */
  const moveRefusals = new Map();

  /** The Edit form's status follows a move, so saving the form next does not send the old column back. */
  function setFormStatus(form, status) {
    const select = form.elements.status;
    if (!select) return;
    for (const option of select.options) {
      option.defaultSelected = option.value === status;
      option.selected = option.value === status;
    }
  }

  /** Moves a card to \`status\` through its Edit form; the live feed redraws the board when it is saved. */
  function moveCard(card, status) {
    const form = card.querySelector("form[data-quick-edit]");
    if (!form || card.dataset.status === status) return;
    moveRefusals.delete(card.id);
    showOnCard(card, "[data-move-error]", "");
    card.setAttribute("aria-busy", "true");
    // Only the status: the form's other fields are the card's values and would be sent unchanged.
    const only = new FormData();
    only.set("_csrf", form.elements._csrf.value);
    only.set("companyId", form.elements.companyId.value);
    only.set("status", status);
    fetch(form.action, {
      method: "POST",
      body: new URLSearchParams(only),
      headers: { "X-Dashboard-Fetch": "1" },
      credentials: "same-origin",
    })
      .then((res) => res.json())
      .catch(() => ({ ok: false, message: "The move could not be sent; try again." }))
      .then((result) => {
        // A redraw while the move was on its way replaced the card: act on the one on the page now.
        const shown = document.getElementById(card.id);
        if (!shown) return;
        shown.removeAttribute("aria-busy");
        if (result.ok) {
          const column = document.querySelector('#issue-board section[data-column="' + status + '"]');
          if (column && shown.parentElement !== column) column.querySelector("h2").after(shown);
          shown.dataset.status = status;
          const shownForm = shown.querySelector("form[data-quick-edit]");
          if (shownForm) setFormStatus(shownForm, status);
        } else {
          moveRefusals.set(shown.id, "Not moved: " + result.message);
          showOnCard(shown, "[data-move-error]", "Not moved: " + result.message);
        }
        shown.focus();
      });
  }

  function startBoard(board) {
    const columns = () => Array.from(board.querySelectorAll("section[data-column]"));
    board.addEventListener("live-redrawn", () => {
      for (const [id, message] of moveRefusals) {
        const card = document.getElementById(id);
        if (card) showOnCard(card, "[data-move-error]", message);
        else moveRefusals.delete(id);
      }
    });
    board.addEventListener("dragstart", (event) => {
      const card = event.target.closest && event.target.closest(".card[draggable]");
      if (!card) return;
      event.dataTransfer.setData("text/plain", card.dataset.issueId);
      event.dataTransfer.effectAllowed = "move";
      card.classList.add("dragging");
    });
    board.addEventListener("dragend", (event) => {
      const card = event.target.closest && event.target.closest(".card");
      if (card) card.classList.remove("dragging");
      for (const column of columns()) column.classList.remove("drop-target");
    });
    board.addEventListener("dragover", (event) => {
      const column = event.target.closest && event.target.closest("section[data-column]");
      if (!column) return;
      event.preventDefault();
      for (const other of columns()) other.classList.toggle("drop-target", other === column);
    });
    board.addEventListener("drop", (event) => {
      const column = event.target.closest && event.target.closest("section[data-column]");
      if (!column) return;
      event.preventDefault();
      column.classList.remove("drop-target");
      const card = document.getElementById("card-" + event.dataTransfer.getData("text/plain"));
      if (card) moveCard(card, column.dataset.column);
    });
    board.addEventListener("keydown", (event) => {
      if (!event.altKey || (event.key !== "ArrowRight" && event.key !== "ArrowLeft")) return;
      const card = event.target.closest && event.target.closest(".card[draggable]");
      if (!card || event.target !== card) return;
      const order = columns().map((column) => column.dataset.column);
      const next = order[order.indexOf(card.dataset.status) + (event.key === "ArrowRight" ? 1 : -1)];
      if (!next) return;
      event.preventDefault();
      moveCard(card, next);
    });
  }

  /**
   * A saved form holds nothing unsent any more: its fields' defaults become what was sent (and a note,
   * now a comment, is emptied), so its live region redraws with the saved issue.
   */
  function markSent(form) {
    for (const field of form.querySelectorAll("input, select, textarea")) {
      if (field.tagName === "TEXTAREA") field.value = "";
      if (field.tagName === "SELECT") for (const option of field.options) option.defaultSelected = option.selected;
      else if (field.type === "checkbox" || field.type === "radio") field.defaultChecked = field.checked;
      else field.defaultValue = field.value;
    }
  }

  /** Every card's Edit form and the issue page's properties panel: sent in place, a refusal shown in it. */
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!form.matches || !form.matches("form[data-quick-edit]")) return;
    event.preventDefault();
    sendQuickEdit(form).then((result) => {
      const box = form.querySelector("[data-quick-edit-error]");
      box.textContent = result.ok ? "" : result.message;
      box.hidden = result.ok;
      const done = form.querySelector("[data-quick-edit-done]");
      if (done) {
        done.textContent = result.ok ? result.message : "";
        done.hidden = !result.ok;
      }
      if (result.ok) markSent(form);
      const menu = form.closest("details");
      if (!result.ok || !menu) return;
      menu.open = false;
      // The focused Save is hidden now; the card (by id) keeps focus through the board's redraw.
      const card = form.closest(".card");
      if (!card) return;
      moveRefusals.delete(card.id);
      showOnCard(card, "[data-move-error]", "");
      card.focus();
    });
  });

  /** Escape in an open Edit menu closes it, unsaved, and puts focus back on its summary. */
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || !event.target.closest) return;
    const menu = event.target.closest("details.card-menu[open]");
    if (!menu) return;
    event.preventDefault();
    const form = menu.querySelector("form[data-quick-edit]");
    if (form) form.reset();
    menu.open = false;
    menu.querySelector("summary").focus();
  });
`;
