import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/**
 * A self-contained API reference page rendered on the server from the OpenAPI document: no
 * client bundle and no CDN (the machines that run this have no internet, and users' browsers
 * should not need it either).
 */

type Json = Record<string, unknown>;

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

interface Operation {
  method: string;
  path: string;
  op: Json;
}

function operationsByTag(doc: Json): Map<string, Operation[]> {
  const groups = new Map<string, Operation[]>();
  const paths = (doc.paths ?? {}) as Record<string, Json>;
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const tag = ((op.tags as string[] | undefined) ?? ["Other"])[0] ?? "Other";
      groups.set(tag, [...(groups.get(tag) ?? []), { method, path, op }]);
    }
  }
  return groups;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

function renderOperation({ method, path, op }: Operation): HtmlEscapedString | Promise<HtmlEscapedString> {
  const body = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
  const responses = (op.responses ?? {}) as Record<string, Json>;
  return html`<section class="op" id="${method}-${path}">
    <h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${path}</code></h3>
    <p>${String(op.summary ?? "")}</p>
    ${op.description ? html`<p class="d">${String(op.description)}</p>` : ""}
    ${
      body
        ? Object.entries(body).map(
            ([type, media]) =>
              html`<details><summary>Request body (${type})</summary><pre>${pretty(media.schema)}</pre></details>`,
          )
        : ""
    }
    <ul>
      ${Object.entries(responses).map(([code, r]) => html`<li><b>${code}</b> ${String(r.description ?? "")}</li>`)}
    </ul>
  </section>`;
}

export function renderDocsPage(doc: Json): HtmlEscapedString | Promise<HtmlEscapedString> {
  const info = (doc.info ?? {}) as Json;
  const groups = [...operationsByTag(doc).entries()];
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${String(info.title)} — API reference</title>
<style>${raw(STYLE)}</style></head>
<body><main>
<h1>${String(info.title)} <small>v${String(info.version)}</small></h1>
<p>${String(info.description ?? "")}</p>
<p>Machine-readable: <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1).</p>
<nav aria-label="Sections"><ul>${groups.map(([tag]) => html`<li><a href="#tag-${tag}">${tag}</a></li>`)}</ul></nav>
${groups.map(([tag, ops]) => html`<h2 id="tag-${tag}">${tag}</h2>${ops.map(renderOperation)}`)}
</main></body></html>`;
}

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1a1a1a;background:#fafafa}
main{max-width:60rem;margin:0 auto;padding:1rem}
h2{border-bottom:2px solid #ddd;margin-top:2rem}
.op{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.5rem 1rem;margin:.75rem 0}
.op h3{font-size:1rem;margin:.25rem 0}
.m{display:inline-block;min-width:4.5rem;text-align:center;border-radius:4px;color:#fff;font-size:.8rem;padding:.1rem .3rem}
.get{background:#0b6e4f}.post{background:#1f4e9c}.put,.patch{background:#8a5300}.delete{background:#a4161a}
pre{background:#f3f3f3;padding:.5rem;overflow:auto;font-size:.8rem}
.d{color:#444}
nav ul{display:flex;flex-wrap:wrap;gap:.5rem 1rem;list-style:none;padding:0}
`;
