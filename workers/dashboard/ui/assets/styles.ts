/**
 * The dashboard's whole stylesheet. Served from the Worker (no CDN); colours meet WCAG AA contrast on
 * their backgrounds; layouts collapse to one column below 720 px. Inline `style` attributes are not
 * used anywhere: the Content-Security-Policy forbids them.
 */
export const DASHBOARD_CSS = `
:root {
  --bg: #f6f7f9; --panel: #ffffff; --text: #1c2430; --muted: #4f5b6a; --line: #d5dae1;
  --accent: #0b5cad; --accent-text: #ffffff; --danger: #a4161a; --ok: #146c2e; --warn: #8a5300;
  --focus: #ffbf47; --radius: 6px;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.5;
  color: var(--text); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip-link { position: absolute; left: -9999px; top: 0; background: var(--panel); padding: .5rem 1rem; }
.skip-link:focus { left: 1rem; z-index: 10; }
header.top { background: #102a43; color: #fff; }
header.top .bar { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; align-items: center; padding: .6rem 1rem;
  max-width: 1200px; margin: 0 auto; }
header.top a { color: #fff; text-decoration: none; padding: .25rem 0; }
header.top a[aria-current="page"] { border-bottom: 3px solid var(--focus); }
header.top .brand { font-weight: 700; margin-right: .5rem; }
header.top nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0; padding: 0; }
header.top .who { margin-left: auto; display: flex; gap: .75rem; align-items: center; }
header.top .who button { background: transparent; color: #fff; border: 1px solid #9fb3c8; }
main { max-width: 1200px; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .25rem; }
.subnav ul { display: flex; flex-wrap: wrap; gap: .25rem; list-style: none; padding: 0; margin: 0 0 1rem; }
.subnav a { display: inline-block; padding: .35rem .75rem; border-radius: var(--radius); text-decoration: none;
  border: 1px solid var(--line); background: var(--panel); }
.subnav a[aria-current="page"] { background: var(--accent); color: var(--accent-text); border-color: var(--accent); }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); padding: 1rem;
  margin-bottom: 1rem; }
.panel > h2:first-child, .panel > h3:first-child { margin-top: 0; }
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); }
.muted { color: var(--muted); }
.flash { border-left: 4px solid var(--ok); background: #e8f5ec; padding: .6rem 1rem; margin-bottom: 1rem; }
.alert { border-left: 4px solid var(--danger); background: #fdecea; padding: .6rem 1rem; margin-bottom: 1rem; }
table { width: 100%; border-collapse: collapse; background: var(--panel); }
th, td { text-align: left; padding: .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .85rem; color: var(--muted); font-weight: 600; }
.table-wrap { overflow-x: auto; }
form.stack { display: grid; gap: .75rem; max-width: 560px; }
form.inline { display: inline; }
form.row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: flex-end; }
.field { display: grid; gap: .25rem; }
.field label { font-weight: 600; }
.field .hint { font-size: .85rem; color: var(--muted); }
.field-error { color: var(--danger); font-size: .9rem; margin: 0; font-weight: 600; }
input, select, textarea { font: inherit; padding: .45rem .6rem; border: 1px solid #8895a7; border-radius: var(--radius);
  background: #fff; color: var(--text); width: 100%; }
input[type="checkbox"], input[type="radio"] { width: auto; }
input[aria-invalid="true"], select[aria-invalid="true"], textarea[aria-invalid="true"] { border: 2px solid var(--danger); }
textarea { min-height: 6rem; }
button, .button { font: inherit; padding: .45rem .9rem; border-radius: var(--radius); border: 1px solid var(--accent);
  background: var(--accent); color: var(--accent-text); cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary, .button.secondary { background: var(--panel); color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); }
.badge { display: inline-block; padding: .05rem .5rem; border-radius: 999px; font-size: .8rem; font-weight: 600;
  border: 1px solid currentColor; white-space: nowrap; }
.badge.ok { color: var(--ok); } .badge.warn { color: var(--warn); } .badge.danger { color: var(--danger); }
.badge.neutral { color: var(--muted); }
.board { display: grid; grid-auto-flow: column; grid-auto-columns: minmax(10rem, 1fr); gap: .75rem; overflow-x: auto;
  padding-bottom: .5rem; }
main:has(.board) { max-width: 1600px; }
.board section { background: #eceff3; border-radius: var(--radius); padding: .5rem; min-height: 6rem; min-width: 0; }
.board .card a { overflow-wrap: anywhere; }
.board h2 { font-size: .95rem; margin: .25rem .25rem .5rem; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); padding: .5rem .6rem;
  margin-bottom: .5rem; }
.card a { font-weight: 600; }
.card[draggable="true"] { cursor: grab; }
.card:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.card.dragging { opacity: .5; }
.board section.drop-target { outline: 2px dashed var(--accent); outline-offset: -2px; }
.chips { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem; padding: 0; margin: .25rem 0; }
.chip { font-size: .75rem; padding: 0 .45rem; border-radius: 999px; background: #dde3ea; color: var(--text); }
.avatar { display: inline-grid; place-items: center; width: 1.5rem; height: 1.5rem; border-radius: 50%;
  background: #3a4a5c; color: #fff; font-size: .7rem; font-weight: 700; vertical-align: middle; }
.due { display: block; font-size: .8rem; color: var(--muted); }
.due.overdue { color: var(--danger); font-weight: 600; }
.card-menu summary { cursor: pointer; font-size: .85rem; color: var(--accent); margin-top: .25rem; }
.card-menu .quick-edit { display: grid; gap: .35rem; margin: .4rem 0; }
.card-menu .quick-edit .field { margin: 0; }
.card-menu fieldset { border: 1px solid var(--line); border-radius: var(--radius); padding: .25rem .5rem; }
.card-menu label.check { display: block; font-weight: 400; }
.board .more { display: block; font-size: .85rem; padding: .25rem; }
.tree, .tree ul { list-style: none; padding-left: 1.25rem; margin: 0; }
.tree { padding-left: 0; }
.tree li { margin: .35rem 0; }
.tree li > .node { display: inline-flex; flex-wrap: wrap; gap: .5rem; align-items: center; background: var(--panel);
  border: 1px solid var(--line); border-radius: var(--radius); padding: .35rem .6rem; }
.qr-box { display: grid; gap: 1rem; justify-items: start; }
.qr-box img { width: 264px; height: 264px; image-rendering: pixelated; border: 8px solid #fff; background: #fff; }
[data-session-watch] .when-connected, [data-session-watch] .when-qr, [data-session-watch] .when-waiting { display: none; }
[data-session-watch][data-view="connected"] .when-connected { display: block; }
[data-session-watch][data-view="qr"] .when-qr { display: grid; }
[data-session-watch][data-view="waiting"] .when-waiting { display: block; }
pre, code.block { background: #0f1720; color: #e6edf3; padding: .75rem; border-radius: var(--radius); overflow-x: auto;
  white-space: pre-wrap; word-break: break-word; font-size: .85rem; }
details.raw-output { margin-top: 1rem; }
details.raw-output > summary { cursor: pointer; font-weight: 600; padding: .25rem 0; }
.secret { font-family: ui-monospace, monospace; word-break: break-all; }
.chart text { font-size: 12px; fill: var(--text); }
.chart rect.bar { fill: var(--accent); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.login { max-width: 420px; margin: 10vh auto; }
@media (max-width: 720px) {
  main { padding: .75rem; }
  header.top .who { margin-left: 0; }
  th, td { padding: .4rem; }
  .board { grid-auto-flow: row; grid-auto-columns: auto; }
}
/* gateway */
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-top: .75rem; }
.actions p { margin: 0; }
.copy-row { display: flex; gap: .5rem; align-items: center; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .5rem 0 1rem; }
.pairing-code { font-family: ui-monospace, monospace; font-size: 2rem; font-weight: 700; letter-spacing: .2em;
  margin: 0; }
fieldset.choices { border: 1px solid var(--line); border-radius: var(--radius); padding: .5rem .75rem; margin: 0; }
fieldset.choices legend { font-weight: 600; padding: 0 .25rem; }
fieldset.choices ul { list-style: none; padding: 0; margin: .5rem 0 0; display: grid; gap: .25rem;
  grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); }
fieldset.choices code { font-size: .8rem; }
/* board */
.prose { white-space: pre-wrap; overflow-wrap: anywhere; }
svg.chart { display: block; max-width: 100%; height: auto; margin: .5rem 0; }
ol.comments { list-style: none; padding: 0; }
ol.mine .card { margin-bottom: .5rem; }
.card.unread { border-left: 4px solid var(--warn); }
.keyboard-help dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem .75rem; margin: 0; }
.keyboard-help dd { margin: 0; }
kbd { font-family: ui-monospace, monospace; font-size: .85rem; border: 1px solid var(--line); border-radius: 4px;
  padding: 0 .3rem; background: var(--bg); }
h4 { font-size: .95rem; margin: .75rem 0 .25rem; }
/* issue page: main column (status, description, timeline, comment box) and the side column */
.issue-layout { display: grid; gap: 1.25rem; grid-template-columns: minmax(0, 1fr) minmax(260px, 340px);
  align-items: start; }
.issue-meta { margin: -.5rem 0 1rem; }
.issue-side .panel { padding: .75rem; }
.issue-side h2 { font-size: 1rem; }
.issue-side pre { max-height: 12rem; overflow: auto; }
.issue-side .quick-edit { display: grid; gap: .5rem; margin-bottom: .75rem; }
.issue-side fieldset { border: 1px solid var(--line); border-radius: var(--radius); padding: .25rem .5rem; }
.issue-side label.check { display: block; font-weight: 400; }
ol.timeline { list-style: none; margin: 0; padding: 0 0 0 .75rem; border-left: 2px solid var(--line); }
ol.timeline > li { margin: 0 0 .6rem; }
ol.timeline > li > p { margin: 0 0 .25rem; }
ol.timeline details.run-fold > summary { cursor: pointer; color: var(--accent); font-size: .9rem; }
.comment-box { margin: 1rem 0; }
details.add-document > summary { cursor: pointer; color: var(--accent); margin-top: .5rem; }
@media (max-width: 900px) { .issue-layout { grid-template-columns: minmax(0, 1fr); } }
`;
