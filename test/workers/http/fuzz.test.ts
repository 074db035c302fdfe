// A fuzzer over the OpenAPI document the app serves: every operation, called as the SUPERADMIN with
// real ids where it names one, gets malformed, mistyped, oversized, deeply nested and out-of-range
// input (bodies, path parameters and query strings), generated from its own schemas with a fixed
// seed. Not one answer may be a 5xx: bad input is a 4xx that names the problem. Bounded: a fixed
// number of requests per operation, destructive operations last.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { asKey, call, createUser, generateKey, rootSession } from "../helpers";

type Schema = Record<string, unknown>;
type Json = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  parameters: Array<{ name: string; in: string; schema?: Schema }>;
  body: Schema | undefined;
  bodyType: string | undefined;
}

let headers: Record<string, string>;
let operations: Operation[];
let components: Record<string, Schema>;
const ids: Record<string, string> = {};

const hash = (text: string): number => {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
};

/** Deterministic pseudo-randomness (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function resolve(schema: Schema | undefined): Schema {
  let current = schema ?? {};
  for (let hops = 0; typeof current.$ref === "string" && hops < 10; hops++)
    current = components[String(current.$ref).split("/").pop() ?? ""] ?? {};
  return current;
}

/** A plausible value for a schema: what a well-meaning client would send. */
function example(schema: Schema | undefined, depth = 0): unknown {
  const s = resolve(schema);
  if (depth > 4) return null;
  const variants = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (variants?.[0]) return example(variants[0], depth + 1);
  if (Array.isArray(s.enum)) return s.enum[0];
  if (s.const !== undefined) return s.const;
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
  switch (type) {
    case "string":
      if (s.format === "uuid") return ids.companyId;
      if (s.format === "email") return `fuzz-${Math.floor(Math.random() * 1e9)}@example.test`;
      if (s.format === "uri") return "https://example.com/x";
      return "x".repeat(Math.max(1, Number(s.minLength ?? 1)));
    case "integer":
    case "number":
      return Number(s.minimum ?? 1);
    case "boolean":
      return true;
    case "array":
      return [example(s.items as Schema, depth + 1)];
    default: {
      const properties = (s.properties ?? {}) as Record<string, Schema>;
      const required = new Set((s.required ?? Object.keys(properties)) as string[]);
      return Object.fromEntries(
        Object.entries(properties)
          .filter(([name]) => required.has(name))
          .map(([name, property]) => [name, example(property, depth + 1)]),
      );
    }
  }
}

const nested = (levels: number): unknown => (levels === 0 ? 1 : { n: nested(levels - 1) });
const WRONG_VALUES: unknown[] = [
  null,
  -1,
  1.5,
  1e308,
  "",
  "x".repeat(20_000),
  "💥\u0000\u202e",
  [],
  {},
  true,
  nested(30),
  "../../etc/passwd",
  "2026-13-45T99:99:99Z",
];

/** Values every field of every body is tried with: nothing, huge, deep, and the wrong type. */
const EVERY_FIELD_GETS: unknown[] = [null, "x".repeat(20_000), nested(30), [], 1e308];

/**
 * Bodies for one operation: broken JSON, wrong shapes, and a valid example with one field wrong:
 * each field with every value of EVERY_FIELD_GETS and two more drawn from WRONG_VALUES.
 */
function bodies(op: Operation, next: () => number): Array<string | undefined> {
  const base = example(op.body);
  const out: Array<string | undefined> = [undefined, "{", "[]", JSON.stringify(base)];
  if (base && typeof base === "object" && !Array.isArray(base)) {
    for (const field of Object.keys(resolve(op.body).properties ?? {})) {
      const drawn = [0, 1].map(() => WRONG_VALUES[Math.floor(next() * WRONG_VALUES.length)]);
      for (const value of [...EVERY_FIELD_GETS, ...drawn])
        out.push(JSON.stringify({ ...(base as Json), [field]: value }));
    }
    out.push(JSON.stringify({ ...(base as Json), unexpected: 1 }));
  }
  return out;
}

const PATH_JUNK = [
  "00000000-0000-0000-0000-000000000000",
  "not-an-id",
  "x".repeat(600),
  "%2e%2e",
  "%00",
  "🙂",
];

function fillPath(path: string, junk?: string): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (junk !== undefined) return encodeURIComponent(junk);
    if (name === "id")
      return path.startsWith("/api/users") ? (ids.userId ?? "") : (ids.sessionInternalId ?? "");
    return encodeURIComponent(ids[name] ?? crypto.randomUUID());
  });
}

function query(op: Operation, next: () => number): string {
  const params = op.parameters.filter((p) => p.in === "query");
  if (params.length === 0) return "";
  const pairs = params.map((p) => {
    const values = ["-5", "abc", "99999999999", "", "a,b,,c", "%ZZ"];
    return `${encodeURIComponent(p.name)}=${values[Math.floor(next() * values.length)]}`;
  });
  return `?${pairs.join("&")}`;
}

async function seed(): Promise<void> {
  const root = await rootSession();
  headers = asKey(await generateKey(root));
  const made = async (path: string, body: unknown): Promise<Json> => {
    const res = await call<Json>("POST", path, { headers, body });
    if (res.status >= 300) throw new Error(`seeding ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const company = await made("/api/companies", { name: "Fuzz Co", requireBoardApprovalForNewAgents: false });
  ids.companyId = String(company.id);
  const agent = await made(`/api/companies/${ids.companyId}/agents`, {
    name: "Fuzzer",
    role: "engineer",
    adapterType: "coder_local",
  });
  ids.agentId = String(agent.id);
  const project = await made(`/api/companies/${ids.companyId}/projects`, { name: "Fuzz project" });
  ids.projectId = String(project.id);
  const issue = await made(`/api/companies/${ids.companyId}/issues`, { title: "Fuzz issue" });
  ids.issueId = String(issue.id);
  const goal = await made(`/api/companies/${ids.companyId}/goals`, { title: "Fuzz goal" });
  ids.goalId = String(goal.id);
  const approval = await made(`/api/companies/${ids.companyId}/approvals`, {
    type: "request_board_approval",
    payload: { why: "fuzz" },
  });
  ids.approvalId = String(approval.id);
  const session = await call<{ data: Json }>("POST", "/api/sessions", {
    headers,
    body: { sessionId: "fuzz-session" },
  });
  ids.sessionId = "fuzz-session";
  ids.sessionInternalId = String(session.body.data?.id ?? "fuzz-session");
  ids.jid = "628123456789@s.whatsapp.net";
  const user = await createUser("STAFF");
  ids.userId = user.userId;
}

const keyStillWorks = async () => (await call("GET", "/api/sessions", { headers })).status === 200;

beforeAll(async () => {
  await seed();
  const doc = (await call<Json>("GET", "/api/openapi.json", { headers })).body;
  components = ((doc.components as Json)?.schemas ?? {}) as Record<string, Schema>;
  operations = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      const content = ((op.requestBody as Json | undefined)?.content ?? {}) as Record<
        string,
        { schema?: Schema }
      >;
      const bodyType = Object.keys(content)[0];
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: (op.parameters ?? []) as Operation["parameters"],
        body: bodyType ? content[bodyType]?.schema : undefined,
        bodyType,
      });
    }
  }
  // Destructive operations last, so they do not take the seeded ids away from the others; deleting
  // our own API key last of all.
  const rank = (op: Operation) =>
    op.path === "/api/user/api-key" && op.method === "DELETE" ? 2 : Number(op.method === "DELETE");
  operations.sort((a, b) => rank(a) - rank(b));
}, 60_000);

describe("fuzzing every operation of the OpenAPI document", () => {
  it("answers no malformed, mistyped, oversized or deeply nested request with a 5xx", async () => {
    expect(operations.length).toBeGreaterThan(150);
    const failures: string[] = [];
    let requests = 0;
    for (const op of operations) {
      // Each operation draws from its own seed, so a failure reproduces whatever else runs.
      const next = random(hash(`${op.method} ${op.path}`));
      if (op.path.includes("/simulate")) continue; // the simulator's own controls, development only
      const isJson = op.bodyType === undefined || op.bodyType.includes("json");
      const attempts: Array<{ url: string; body: string | undefined; type?: string }> = [];
      for (const body of isJson ? bodies(op, next) : [undefined, "garbage"])
        attempts.push({ url: `${fillPath(op.path)}${query(op, next)}`, body });
      if (isJson && op.method !== "GET") {
        attempts.push({ url: fillPath(op.path), body: JSON.stringify(example(op.body)), type: "text/plain" });
        attempts.push({ url: fillPath(op.path), body: JSON.stringify({ big: "x".repeat(1024 * 1024 + 1) }) });
      }
      if (op.path.includes("{"))
        for (let i = 0; i < 2; i++) {
          const junk = PATH_JUNK[Math.floor(next() * PATH_JUNK.length)] ?? "x";
          attempts.push({ url: fillPath(op.path, junk), body: JSON.stringify(example(op.body)) });
        }
      for (const attempt of attempts) {
        requests++;
        const send = () =>
          call(op.method, attempt.url, {
            headers: {
              ...headers,
              "content-type": attempt.type ?? (isJson ? "application/json" : (op.bodyType ?? "text/plain")),
            },
            ...(attempt.body === undefined || op.method === "GET" ? {} : { rawBody: attempt.body }),
          });
        let res = await send();
        // Some operations replace or revoke the caller's own key (POST /user/api-key): get a new one.
        if (res.status === 401 && !(await keyStillWorks())) {
          headers = asKey(await generateKey(await rootSession()));
          res = await send();
        }
        if (res.status >= 500)
          failures.push(
            `${op.method} ${attempt.url.slice(0, 160)} body=${String(attempt.body).slice(0, 120)} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
          );
      }
    }
    expect(requests).toBeGreaterThan(1000);
    expect(failures).toEqual([]);
    // The seeded state is still consistent enough to read.
    expect(await env.DB.prepare("SELECT count(*) AS n FROM companies").first()).toBeTruthy();
    // About a minute on two busy cores; the bound is for a hang, not a speed limit.
  }, 300_000);
});
