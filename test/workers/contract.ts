/**
 * Every response a workers test receives is checked against the OpenAPI document the app serves
 * (the document docs/openapi.json holds; http/openapi-drift.test.ts keeps the two equal), so the
 * published contract cannot drift from what the code answers. The document is checked as published,
 * with test/workers/json-schema.ts, not through the zod schemas behind it: the two can disagree (zod's
 * `.nullable()` on a registered schema was once published as not nullable), and clients read the JSON.
 */
import { createApp, OPENAPI_CONFIG } from "../../workers/app";
import { type JsonSchema, SchemaChecker, type SchemaViolation } from "./json-schema";

type Json = Record<string, unknown>;

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
}

interface Template {
  path: string;
  segments: string[];
  operations: Record<string, Operation>;
}

/**
 * Requests the document rightly leaves out. Each entry says why; anything else that reaches no
 * documented route is a failure.
 */
const UNDOCUMENTED: ReadonlyArray<{ why: string; matches: (method: string, path: string) => boolean }> = [
  {
    why: "The dashboard: HTML pages, forms and assets outside /api, /llms and the link endpoints",
    matches: (_m, path) => !/^\/(api|llms|bridge|runner)(\/|$)/.test(path),
  },
  {
    why: "The bridge and runner links: an internal WebSocket protocol between our own processes",
    matches: (_m, path) => /^\/(bridge|runner)\/v1\//.test(path),
  },
  {
    why: "/mcp: JSON-RPC over MCP Streamable HTTP, described by the MCP specification, not by OpenAPI",
    matches: (_m, path) => path === "/mcp",
  },
  {
    why: "The document itself and the page that renders it",
    matches: (method, path) => method === "GET" && (path === "/api/openapi.json" || path === "/api/docs"),
  },
  {
    why: "Paths no route serves, which tests send to prove the 404 (and the body limit) holds everywhere",
    matches: (_m, path) =>
      [
        "/api/no-such-thing",
        "/api/no-such-route",
        "/api/companies/x/unknown-thing",
        "/api/anything/else/media",
      ].includes(path),
  },
];

interface Contract {
  document: Json;
  templates: Template[];
  checker: SchemaChecker;
}

let contract: Contract | undefined;

/** Built once per isolate: the same document GET /api/openapi.json serves. */
function loadContract(): Contract {
  if (contract) return contract;
  const document = createApp().getOpenAPI31Document(OPENAPI_CONFIG) as unknown as Json;
  const paths = document.paths as Record<string, Record<string, Operation>>;
  const templates = Object.entries(paths).map(([path, operations]) => ({
    path,
    segments: path.split("/"),
    operations,
  }));
  contract = { document, templates, checker: new SchemaChecker(document) };
  return contract;
}

const isParam = (segment: string) => segment.startsWith("{") && segment.endsWith("}");

/** The documented path a concrete path falls under; literal segments win over parameters, as routing does. */
function findTemplate(templates: Template[], path: string): Template | undefined {
  const parts = path.split("/");
  const candidates = templates.filter(
    (t) =>
      t.segments.length === parts.length &&
      t.segments.every((s, i) => (isParam(s) ? (parts[i] ?? "") !== "" : s === parts[i])),
  );
  const rank = (t: Template) => t.segments.map((s) => (isParam(s) ? "1" : "0")).join("");
  return candidates.sort((a, b) => rank(a).localeCompare(rank(b)))[0];
}

const mediaType = (contentType: string | null) =>
  (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";

// A documented media type or range (image/*, or any type) covers the type answered.
function coversMediaType(documented: string, answered: string): boolean {
  if (documented === "*/*") return answered !== "";
  if (documented.endsWith("/*")) return answered.startsWith(documented.slice(0, -1));
  return documented === answered;
}

export interface ReceivedResponse {
  method: string;
  /** The URL path, without the query. */
  path: string;
  status: number;
  contentType: string | null;
  /** The body as text; undefined when it was not read (streams, binaries). */
  text: string | undefined;
}

/** What is wrong with a response, judged against the document; empty when it matches. */
export function contractViolations(received: ReceivedResponse): string[] {
  const { templates, checker } = loadContract();
  const method = received.method.toLowerCase();
  const template = findTemplate(templates, received.path);
  const operation = template?.operations[method];
  if (!template || !operation) {
    if (UNDOCUMENTED.some((u) => u.matches(received.method, received.path))) return [];
    return [`${received.method} ${received.path} is not in the OpenAPI document (nor on its allow-list)`];
  }
  const route = `${received.method} ${template.path}`;
  const documented = operation.responses?.[String(received.status)];
  if (!documented) {
    const statuses = Object.keys(operation.responses ?? {}).join(", ");
    return [`${route} answered ${received.status}, which it does not document (documents ${statuses})`];
  }
  const content = documented.content;
  if (!content || received.status === 101) return [];
  const type = mediaType(received.contentType);
  const match = Object.entries(content).find(([t]) => coversMediaType(mediaType(t), type));
  if (!match) {
    if (received.text === "") return [];
    return [
      `${route} ${received.status} answered ${type || "no content type"}, documents ${Object.keys(content)}`,
    ];
  }
  const [documentedType, { schema }] = match;
  if (!schema || mediaType(documentedType) !== "application/json" || received.text === undefined) return [];
  let body: unknown;
  try {
    body = JSON.parse(received.text);
  } catch {
    return [`${route} ${received.status} is not JSON although it says application/json`];
  }
  const schemaPath = `#/paths/${template.path.replaceAll("~", "~0").replaceAll("/", "~1")}/${method}/responses/${received.status}/content/${documentedType.replaceAll("/", "~1")}/schema`;
  return checker.check(body, schema, schemaPath).map(describe);
}

const describe = (v: SchemaViolation) => `at ${v.at}: ${v.message} (schema ${v.schemaPath})`;

/** Every violation seen in this isolate, so a test that swallows dispatch's error still fails after it. */
export const recordedViolations: string[] = [];

export class ContractViolation extends Error {
  override name = "ContractViolation";
}

/**
 * Checks a response the Worker gave and throws, naming the method, path, status, the failing
 * schema paths and a body excerpt, when it is not what the document says. The response stays
 * readable: only a clone's body is consumed, and only for JSON.
 */
export async function assertMatchesContract(
  request: { method: string; url: string },
  response: Response,
): Promise<void> {
  const url = new URL(request.url);
  const contentType = response.headers.get("content-type");
  const readable = mediaType(contentType) === "application/json" && response.status !== 101;
  const text = readable ? await response.clone().text() : undefined;
  const violations = contractViolations({
    method: request.method,
    path: url.pathname,
    status: response.status,
    contentType,
    text,
  });
  if (violations.length === 0) return;
  const message = [
    `Response breaks the OpenAPI document: ${request.method} ${url.pathname}${url.search} → ${response.status}`,
    ...violations.slice(0, 8).map((v) => `  - ${v}`),
    `  body: ${(text ?? "(not read)").slice(0, 600)}`,
  ].join("\n");
  recordedViolations.push(message);
  throw new ContractViolation(message);
}
