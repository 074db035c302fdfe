import { describe, expect, it } from "vitest";
import { asKey, call, count, generateKey, rootSession } from "../helpers";

describe("HTTP core", () => {
  it("serves the unauthenticated health route with a request id and security headers", async () => {
    const res = await call("GET", "/api/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: true, message: "ok", data: { service: "switchboard" } });
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("puts a request id on error responses too, and echoes a well-formed incoming one", async () => {
    const res = await call("GET", "/api/users", { headers: { "X-Request-Id": "client-chosen-id-123" } });
    expect(res.status).toBe(401);
    expect(res.headers.get("x-request-id")).toBe("client-chosen-id-123");
  });

  it("answers unknown routes with 404 in the gateway envelope", async () => {
    const key = await generateKey(await rootSession());
    const res = await call("GET", "/api/no-such-thing", { headers: asKey(key) });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      status: false,
      message: "Not found",
      error: "No route for GET /api/no-such-thing",
    });
    // Outside /api, /bridge and /llms the paths are the dashboard's: a visitor is sent to sign in.
    const outside = await call("GET", "/nope");
    expect(outside.status).toBe(302);
    expect(outside.headers.get("location")).toBe("/login?next=%2Fnope");
  });

  it("answers unknown control-plane routes in the control-plane envelope", async () => {
    const key = await generateKey(await rootSession());
    const res = await call("GET", "/api/companies/x/unknown-thing", { headers: asKey(key) });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "No route for GET /api/companies/x/unknown-thing", code: "not_found" });
    const unauth = await call("GET", "/api/agents/me");
    expect(unauth.status).toBe(401);
    expect(unauth.body).toEqual({ error: "Missing or invalid credentials", code: "unauthorized" });
  });

  it("rejects malformed JSON with 400 and writes nothing", async () => {
    const key = await generateKey(await rootSession());
    const before = await count("users");
    const res = await call("POST", "/api/users", {
      rawBody: '{"name": "x", "email": ',
      headers: { ...asKey(key), "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      status: false,
      message: "Invalid request parameters",
      error: "Malformed JSON in request body",
    });
    expect(await count("users")).toBe(before);
  });

  it("rejects wrong types and unknown fields with 400 naming the field, and writes nothing", async () => {
    const key = await generateKey(await rootSession());
    const before = await count("users");
    const wrongType = await call("POST", "/api/users", {
      body: { name: 42, email: "t@example.test", password: "long-enough-pw" },
      headers: asKey(key),
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body).toMatchObject({ status: false, message: "Invalid request parameters" });
    expect(String((wrongType.body as { error: string }).error)).toContain("name:");

    const unknownField = await call("POST", "/api/users", {
      body: { name: "T", email: "t2@example.test", password: "long-enough-pw", passwordHash: "x" },
      headers: asKey(key),
    });
    expect(unknownField.status).toBe(400);
    expect(String((unknownField.body as { error: string }).error)).toContain(
      'Unrecognized key: "passwordHash"',
    );
    expect(await count("users")).toBe(before);
  });

  it("rejects bodies over 1 MiB with 413 and writes nothing", async () => {
    const key = await generateKey(await rootSession());
    const before = await count("users");
    const res = await call("POST", "/api/users", {
      body: { name: "x".repeat(1024 * 1024 + 10), email: "big@example.test", password: "long-enough-pw" },
      headers: asKey(key),
    });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ status: false, message: "Payload too large" });
    expect(await count("users")).toBe(before);
  });

  it("holds JSON to 1 MiB on every path, upload paths included: only multipart uploads there get more", async () => {
    const key = await generateKey(await rootSession());
    const big = JSON.stringify({ caption: "x".repeat(1024 * 1024 + 10) });
    for (const [method, path] of [
      ["POST", "/api/messages/any/628123456789@s.whatsapp.net/media"],
      ["PUT", "/api/profile/any/picture"],
      ["POST", "/api/companies/any/logo"],
      ["POST", "/api/anything/else/media"],
    ] as const) {
      const res = await call(method, path, {
        rawBody: big,
        headers: { ...asKey(key), "content-type": "application/json" },
      });
      expect(res.status, `${method} ${path}`).toBe(413);
    }
  });

  it("refuses JSON nested deeper than 32 levels with 400 on every route, writing nothing", async () => {
    const key = await generateKey(await rootSession());
    const company = await call<{ id: string }>("POST", "/api/companies", {
      headers: asKey(key),
      body: { name: `Deep ${crypto.randomUUID().slice(0, 6)}` },
    });
    const nest = (levels: number): unknown => (levels === 0 ? "x" : { a: nest(levels - 1) });
    const deep = `{"type":"request_board_approval","payload":${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}}`;
    const approvals = `/api/companies/${company.body.id}/approvals`;
    const refused = await call("POST", approvals, {
      rawBody: deep,
      headers: { ...asKey(key), "content-type": "application/json" },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("nested deeper than 32");
    const listed = await call<unknown[]>("GET", approvals, { headers: asKey(key) });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([]);
    const users = await call("POST", "/api/users", { headers: asKey(key), body: nest(40) });
    expect(users.status).toBe(400);
    const fine = await call("POST", approvals, {
      headers: asKey(key),
      body: { type: "request_board_approval", payload: { deep: nest(25) } },
    });
    expect(fine.status).toBe(201);
  });

  it("rejects a non-JSON body on a JSON route with 415", async () => {
    const res = await call("POST", "/api/auth/login", {
      rawBody: "email=a@b.c&password=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ status: false, message: "Unsupported media type" });
  });

  it("names the content type it got when a JSON route refuses a body with 415, in either envelope", async () => {
    const key = await generateKey(await rootSession());
    for (const path of ["/api/sessions", "/api/companies"]) {
      const res = await call<{ error: string }>("POST", path, {
        rawBody: JSON.stringify({ name: "x" }),
        headers: { ...asKey(key), "content-type": "text/plain" },
      });
      expect(res.status, path).toBe(415);
      expect(res.body.error, path).toBe(
        'Content-Type "text/plain" is not accepted here; send application/json',
      );
    }
  });

  it("publishes an OpenAPI 3.1 document and a self-contained docs page", async () => {
    const doc = await call<{ openapi: string; paths: Record<string, unknown> }>("GET", "/api/openapi.json");
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe("3.1.0");
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        "/api/auth/login",
        "/api/auth/session",
        "/api/users/{id}",
        "/api/user/api-key",
      ]),
    );
    const page = await call("GET", "/api/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(String(page.body)).toContain("/api/user/api-key");
    expect(String(page.body)).not.toMatch(/<script|https?:\/\/cdn/);
  });
});
