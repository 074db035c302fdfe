/**
 * A JSON Schema (2020-12, as OpenAPI 3.1 uses it) checker for the keywords docs/openapi.json uses.
 * It interprets the schema instead of compiling it: workerd forbids eval and new Function, so ajv's
 * generated validators cannot run inside the workers test suite. A keyword it does not know fails
 * loudly rather than passing silently, so a new kind of schema cannot slip past unchecked.
 */

export type JsonSchema = boolean | { [keyword: string]: unknown };

export interface SchemaViolation {
  /** Where in the value, as a JSON pointer (`/data/0/botConfig`). */
  at: string;
  /** Where in the schema, through the $refs followed (`#/components/schemas/Session/properties/botConfig`). */
  schemaPath: string;
  message: string;
}

/** Keywords that only describe: they never make a value invalid. */
const ANNOTATIONS = new Set([
  "description",
  "example",
  "examples",
  "default",
  "title",
  "discriminator",
  "deprecated",
  "readOnly",
  "writeOnly",
  "externalDocs",
  "xml",
  "$schema",
  "$id",
  "$comment",
]);

const FORMATS: Record<string, (value: string) => boolean> = {
  "date-time": (v) =>
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(v) &&
    !Number.isNaN(Date.parse(v)),
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
  email: (v) => /^[^\s@]+@[^\s@]+$/.test(v),
  uri: (v) => {
    try {
      new URL(v);
      return true;
    } catch {
      return false;
    }
  },
  // Bodies, not strings: nothing to check in a JSON value.
  binary: () => true,
};

type Json = unknown;

function typeOf(value: Json): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function hasType(value: Json, type: string): boolean {
  if (type === "integer") return typeof value === "number" && Number.isInteger(value);
  if (type === "number") return typeof value === "number" && Number.isFinite(value);
  return typeOf(value) === type;
}

const pointer = (at: string, key: string | number) =>
  `${at}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`;

export class SchemaChecker {
  constructor(private readonly document: Record<string, unknown>) {}

  check(value: Json, schema: JsonSchema, schemaPath: string): SchemaViolation[] {
    const out: SchemaViolation[] = [];
    this.visit(value, schema, "", schemaPath, out);
    return out;
  }

  private resolve(ref: string): JsonSchema {
    if (!ref.startsWith("#/")) throw new Error(`json-schema: only local $refs are supported, got ${ref}`);
    let node: unknown = this.document;
    for (const part of ref.slice(2).split("/")) {
      const key = part.replaceAll("~1", "/").replaceAll("~0", "~");
      node = (node as Record<string, unknown> | undefined)?.[key];
    }
    if (node === undefined) throw new Error(`json-schema: $ref ${ref} points nowhere`);
    return node as JsonSchema;
  }

  private visit(value: Json, schema: JsonSchema, at: string, path: string, out: SchemaViolation[]): void {
    const fail = (message: string, where = at, schemaPath = path) =>
      out.push({ at: where || "/", schemaPath, message });
    if (schema === true) return;
    if (schema === false) return void fail("no value is allowed here");
    for (const [keyword, arg] of Object.entries(schema)) {
      if (ANNOTATIONS.has(keyword) || keyword.startsWith("x-")) continue;
      const here = `${path}/${keyword}`;
      switch (keyword) {
        case "$ref":
          this.visit(value, this.resolve(arg as string), at, arg as string, out);
          break;
        case "type": {
          const types = Array.isArray(arg) ? (arg as string[]) : [arg as string];
          if (!types.some((t) => hasType(value, t)))
            fail(`expected ${types.join(" or ")}, got ${typeOf(value)}`, at, here);
          break;
        }
        case "enum":
          if (!(arg as Json[]).some((e) => deepEqual(e, value)))
            fail(`expected one of ${JSON.stringify(arg)}, got ${JSON.stringify(value)}`, at, here);
          break;
        case "const":
          if (!deepEqual(arg, value)) fail(`expected ${JSON.stringify(arg)}`, at, here);
          break;
        case "allOf":
          (arg as JsonSchema[]).forEach((s, i) => {
            this.visit(value, s, at, `${here}/${i}`, out);
          });
          break;
        case "anyOf":
        case "oneOf":
          this.alternatives(keyword, value, arg as JsonSchema[], at, here, out);
          break;
        case "not":
          if (this.check(value, arg as JsonSchema, here).length === 0)
            fail("matches a schema it must not", at, here);
          break;
        default:
          this.typeSpecific(keyword, schema, value, at, here, out);
      }
    }
  }

  private alternatives(
    keyword: "anyOf" | "oneOf",
    value: Json,
    options: JsonSchema[],
    at: string,
    here: string,
    out: SchemaViolation[],
  ): void {
    const results = options.map((s, i) => {
      const inner: SchemaViolation[] = [];
      this.visit(value, s, at, `${here}/${i}`, inner);
      return inner;
    });
    const matches = results.filter((r) => r.length === 0).length;
    if (keyword === "oneOf" && matches > 1)
      out.push({
        at: at || "/",
        schemaPath: here,
        message: `matches ${matches} of the oneOf schemas, not one`,
      });
    if (matches > 0) return;
    // The alternative that got furthest (fewest complaints) explains the failure best.
    const closest = results.reduce((a, b) => (b.length < a.length ? b : a));
    out.push(
      { at: at || "/", schemaPath: here, message: `matches none of the ${keyword} schemas` },
      ...closest,
    );
  }

  private typeSpecific(
    keyword: string,
    schema: { [keyword: string]: unknown },
    value: Json,
    at: string,
    here: string,
    out: SchemaViolation[],
  ) {
    const arg = schema[keyword];
    const fail = (message: string) => out.push({ at: at || "/", schemaPath: here, message });
    const isObject = typeOf(value) === "object";
    const record = value as Record<string, Json>;
    switch (keyword) {
      case "properties":
        if (!isObject) return;
        for (const [name, sub] of Object.entries(arg as Record<string, JsonSchema>))
          if (name in record) this.visit(record[name], sub, pointer(at, name), pointer(here, name), out);
        return;
      case "required":
        if (!isObject) return;
        for (const name of arg as string[])
          if (!(name in record)) fail(`missing required property "${name}"`);
        return;
      case "additionalProperties": {
        if (!isObject) return;
        const declared = (schema.properties ?? {}) as Record<string, unknown>;
        for (const name of Object.keys(record)) {
          if (name in declared) continue;
          if (arg === false) fail(`unexpected property "${name}"`);
          else this.visit(record[name], arg as JsonSchema, pointer(at, name), here, out);
        }
        return;
      }
      case "items":
        if (Array.isArray(value))
          value.forEach((item, i) => {
            this.visit(item, arg as JsonSchema, pointer(at, i), here, out);
          });
        return;
      case "minItems":
      case "maxItems":
        if (Array.isArray(value) && !withinBound(keyword, value.length, arg as number))
          fail(`${value.length} items breaks ${keyword} ${arg}`);
        return;
      case "minLength":
      case "maxLength": {
        // JSON Schema counts code points, not UTF-16 units.
        const length = typeof value === "string" ? [...value].length : undefined;
        if (length !== undefined && !withinBound(keyword, length, arg as number))
          fail(`length ${length} breaks ${keyword} ${arg}`);
        return;
      }
      case "minimum":
      case "maximum":
      case "exclusiveMinimum":
      case "exclusiveMaximum":
        if (typeof value === "number" && !withinBound(keyword, value, arg as number))
          fail(`${value} breaks ${keyword} ${arg}`);
        return;
      case "pattern":
        if (typeof value === "string" && !new RegExp(arg as string, "u").test(value))
          fail(`${JSON.stringify(value.slice(0, 80))} does not match /${arg}/`);
        return;
      case "format": {
        const known = FORMATS[arg as string];
        if (!known) throw new Error(`json-schema: unknown format "${arg}" at ${here}`);
        if (typeof value === "string" && !known(value))
          fail(`${JSON.stringify(value.slice(0, 80))} is not a ${arg}`);
        return;
      }
      default:
        throw new Error(
          `json-schema: keyword "${keyword}" at ${here} is not supported; teach test/workers/json-schema.ts`,
        );
    }
  }
}

function withinBound(keyword: string, actual: number, bound: number): boolean {
  if (keyword.startsWith("min")) return actual >= bound;
  if (keyword.startsWith("max")) return actual <= bound;
  if (keyword === "exclusiveMinimum") return actual > bound;
  return actual < bound;
}

function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeOf(a) !== typeOf(b) || typeof a !== "object" || a === null) return false;
  if (Array.isArray(a))
    return a.length === (b as Json[]).length && a.every((x, i) => deepEqual(x, (b as Json[])[i]));
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return (
    ka.length === kb.length &&
    ka.every((k) => deepEqual((a as Record<string, Json>)[k], (b as Record<string, Json>)[k]))
  );
}
